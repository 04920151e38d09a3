namespace KvEngine.Cache;

/// <summary>What a cache entry holds; decides statistics, priority and how the secondary cache stores it.</summary>
internal enum CacheEntryRole : byte
{
    Data,
    Index,
    Filter,
    Other,

    /// <summary>The top-level index of a partitioned filter (RocksDB's kFilterMetaBlock).</summary>
    FilterMeta,
}
