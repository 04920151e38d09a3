namespace KvEngine.Cache;

/// <summary>
/// What a cache entry holds; decides statistics, priority and how the secondary cache stores it.
/// In memory only; the values index per-role statistics (<see cref="CacheEntryRoles.Count"/> slots).
/// </summary>
internal enum CacheEntryRole : byte
{
    Data,
    Index,
    Filter,
    Other,

    /// <summary>The top-level index of a partitioned filter (RocksDB's kFilterMetaBlock).</summary>
    FilterMeta,
}
