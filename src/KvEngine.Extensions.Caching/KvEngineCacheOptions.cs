using System.Diagnostics.Metrics;
using Microsoft.Extensions.Logging;

namespace KvEngine.Extensions.Caching;

/// <summary>
/// Configuration of a <see cref="KvEngineCache"/>: where its database lives, how it writes, and the
/// engine settings of that database. Every property but <see cref="ConfigureDatabase"/> binds from
/// configuration (for example the "KvEngineCache" section of appsettings.json) and is validated
/// when the host starts (see <see cref="KvEngineCacheServiceCollectionExtensions"/>). An engine
/// setting left null keeps KvEngine's default. Not thread-safe: configure it before the cache is
/// created.
/// </summary>
public sealed class KvEngineCacheOptions
{
    /// <summary>
    /// Directory of the cache's KvEngine database; created when missing. Required. Caches of one
    /// process with the same path share one open database (see <see cref="InstanceName"/>); another
    /// process holding the directory makes the open fail with a <see cref="KvLockHeldException"/> naming its
    /// LOCK file.
    /// </summary>
    public string? Path { get; set; }

    /// <summary>
    /// Prefix prepended to every cache key (as RedisCacheOptions.InstanceName), so that several
    /// logical caches can share one database without seeing each other's keys: caches of the process
    /// with the same <see cref="Path"/> share its open database, each under its own prefix. Null or
    /// empty: none.
    /// </summary>
    public string? InstanceName { get; set; }

    /// <summary>
    /// Sync the write-ahead log on every write (<see cref="WriteOptions.Sync"/>): a write survives
    /// a machine crash, at the cost of an fdatasync per write. False (the default) survives a
    /// process crash: the log is in the operating system's page cache.
    /// </summary>
    public bool SyncWrites { get; set; }

    /// <summary>
    /// Write no write-ahead log (<see cref="WriteOptions.DisableWal"/>): entries not yet flushed to a
    /// table file are lost by a process crash (a clean stop flushes them). Cannot be combined with
    /// <see cref="SyncWrites"/>. Default false.
    /// </summary>
    public bool DisableWal { get; set; }

    /// <summary>Compression of the database's table files (LZ4 by default: cheap to decompress).</summary>
    public KvCompressionType Compression { get; set; } = KvCompressionType.Lz4;

    /// <summary>Bytes of the database's block cache (<see cref="KvBlockCache"/>); null: KvEngine's 8 MiB.</summary>
    public long? BlockCacheSize { get; set; }

    /// <summary>Bytes of a compressed secondary cache behind the block cache (<see cref="KvOptions.CompressedSecondaryCacheSize"/>); null: none.</summary>
    public long? CompressedSecondaryCacheSize { get; set; }

    /// <summary>Bytes of a memtable before it is flushed (<see cref="ColumnFamilyOptions.WriteBufferSize"/>, 4 KiB to 1 TiB); null: 64 MiB.</summary>
    public long? WriteBufferSize { get; set; }

    /// <summary>Memtables kept in memory, the one written and those waiting for a flush (<see cref="ColumnFamilyOptions.MaxWriteBufferNumber"/>, at least 2); null: 2.</summary>
    public int? MaxWriteBufferNumber { get; set; }

    /// <summary>Background threads for flushes and compactions (<see cref="KvOptions.MaxBackgroundJobs"/>, 1 to 64); null: 2.</summary>
    public int? MaxBackgroundJobs { get; set; }

    /// <summary>Bits per key of the tables' Bloom filters (<see cref="ColumnFamilyOptions.BloomBitsPerKey"/>, 0 for none, at most 100); null: 10.</summary>
    public double? BloomBitsPerKey { get; set; }

    /// <summary>Target size of a table file (<see cref="ColumnFamilyOptions.TargetFileSizeBase"/>, at least 1 KiB); null: 64 MiB.</summary>
    public long? TargetFileSizeBase { get; set; }

    /// <summary>Bytes of write-ahead log after which the oldest memtables are flushed (<see cref="KvOptions.MaxTotalWalSize"/>, 0: automatic); null: 0.</summary>
    public long? MaxTotalWalSize { get; set; }

    /// <summary>How a damaged write-ahead log is treated at open (<see cref="KvOptions.WalRecoveryMode"/>); null: PointInTimeRecovery.</summary>
    public WalRecoveryMode? WalRecoveryMode { get; set; }

    /// <summary>Bytes per second writes are slowed to while compaction catches up (<see cref="KvOptions.DelayedWriteRate"/>, at least 1); null: 16 MiB/s.</summary>
    public long? DelayedWriteRate { get; set; }

    /// <summary>Table files kept open (<see cref="KvOptions.MaxOpenFiles"/>, -1: unlimited, or a positive count); null: -1.</summary>
    public int? MaxOpenFiles { get; set; }

    /// <summary>
    /// Count reads, writes and block-cache hits in a <see cref="KvStatistics"/>, which the "KvEngine"
    /// meter's counters read. Default true.
    /// </summary>
    public bool EnableStatistics { get; set; } = true;

    /// <summary>
    /// Further configuration of the database, applied after every setting above and after the cache
    /// has set the database's compaction filter, its <see cref="KvStatistics"/> and the host's meter
    /// and logger factories (it may change any of them); not bindable from configuration.
    /// </summary>
    public Action<KvOptions>? ConfigureDatabase { get; set; }

    /// <summary>Test hook: adjusts the database options <see cref="CreateDatabaseOptions"/> built (last).</summary>
    internal Action<KvOptions>? ConfigureDatabaseOptions { get; set; }

    /// <summary>
    /// The database options these settings give (the cache's compaction filter with
    /// <paramref name="timeProvider"/>'s clock), and the block cache created for
    /// <see cref="BlockCacheSize"/> when the database uses it: the caller disposes it after the
    /// database is closed.
    /// </summary>
    internal (KvOptions Options, KvBlockCache? OwnedBlockCache) CreateDatabaseOptions(TimeProvider timeProvider, IMeterFactory? meterFactory,
        ILoggerFactory? loggerFactory)
    {
        var kv = new KvOptions
        {
            Compression = Compression,
            CompactionFilter = new ExpiredCacheEntryCompactionFilter(timeProvider),
            Statistics = EnableStatistics ? new KvStatistics() : null,
            MeterFactory = meterFactory,
            LoggerFactory = loggerFactory,
        };
        KvBlockCache? created = null;
        if (BlockCacheSize is { } blockCache)
        {
            kv.BlockCache = created = new KvBlockCache(blockCache, compressedSecondaryCacheSize: CompressedSecondaryCacheSize ?? 0);
        }
        else if (CompressedSecondaryCacheSize is { } secondary)
        {
            kv.CompressedSecondaryCacheSize = secondary;
        }
        if (WriteBufferSize is { } writeBuffer)
        {
            kv.WriteBufferSize = writeBuffer;
        }
        if (MaxWriteBufferNumber is { } writeBuffers)
        {
            kv.MaxWriteBufferNumber = writeBuffers;
        }
        if (MaxBackgroundJobs is { } jobs)
        {
            kv.MaxBackgroundJobs = jobs;
        }
        if (BloomBitsPerKey is { } bloom)
        {
            kv.BloomBitsPerKey = bloom;
        }
        if (TargetFileSizeBase is { } fileSize)
        {
            kv.TargetFileSizeBase = fileSize;
        }
        if (MaxTotalWalSize is { } walSize)
        {
            kv.MaxTotalWalSize = walSize;
        }
        if (WalRecoveryMode is { } recovery)
        {
            kv.WalRecoveryMode = recovery;
        }
        if (DelayedWriteRate is { } rate)
        {
            kv.DelayedWriteRate = rate;
        }
        if (MaxOpenFiles is { } openFiles)
        {
            kv.MaxOpenFiles = openFiles;
        }
        try
        {
            ConfigureDatabase?.Invoke(kv);
        }
        catch
        {
            created?.Dispose();
            throw;
        }
        if (created != null && !ReferenceEquals(kv.BlockCache, created))
        {
            created.Dispose(); // ConfigureDatabase chose another cache
            created = null;
        }
        ConfigureDatabaseOptions?.Invoke(kv);
        return (kv, created);
    }
}
