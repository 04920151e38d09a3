namespace KvEngine.Extensions.Caching;

/// <summary>
/// Configuration of a <see cref="KvEngineCache"/>: where its database lives and how it writes.
/// Bindable from configuration (for example the "KvEngineCache" section of appsettings.json);
/// validated when the host starts (see <see cref="KvEngineCacheServiceCollectionExtensions"/>).
/// Not thread-safe: configure it before the cache is created.
/// </summary>
public sealed class KvEngineCacheOptions
{
    /// <summary>
    /// Directory of the cache's KvEngine database; created when missing. Required. One cache (one
    /// process) owns a directory at a time: a second open fails with KvEngine's LockHeldException.
    /// </summary>
    public string? Path { get; set; }

    /// <summary>
    /// Prefix prepended to every cache key (as RedisCacheOptions.InstanceName), so that several
    /// logical caches can share one database without seeing each other's keys. Null or empty: none.
    /// </summary>
    public string? InstanceName { get; set; }

    /// <summary>
    /// Sync the write-ahead log on every write (<see cref="WriteOptions.Sync"/>): a write survives
    /// a machine crash, at the cost of an fdatasync per write. False (the default) survives a
    /// process crash: the log is in the operating system's page cache.
    /// </summary>
    public bool SyncWrites { get; set; }

    /// <summary>Compression of the database's table files (LZ4 by default: cheap to decompress).</summary>
    public KvCompressionType Compression { get; set; } = KvCompressionType.Lz4;

    /// <summary>
    /// Further configuration of the database (block cache, write buffer size, statistics, ...),
    /// applied after <see cref="Compression"/> and after the cache has set the database's
    /// compaction filter, a <see cref="KvStatistics"/> (read by the "KvEngine" meter's counters;
    /// set it to null to count nothing) and the host's meter and logger factories; not bindable
    /// from configuration.
    /// </summary>
    public Action<KvOptions>? ConfigureDatabase { get; set; }
}
