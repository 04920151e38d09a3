namespace KvEngine.Cache;

/// <summary>Which LRU pool an entry lives in once unreferenced; high-priority entries (index and filter blocks) are evicted last.</summary>
internal enum CachePriority : byte
{
    Low,
    High,
}
