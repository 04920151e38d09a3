namespace KvEngine.Tests.Metamorphic;

/// <summary>
/// The configurations every op log runs under. Each changes how data is laid out, cached or
/// found — never what a read returns — so all must give the same results, and those of the model.
/// "Small" and "tiny" memtables and level sizes make a 1,500-operation log flush often and compact
/// into several levels. Stateless.
/// </summary>
internal static class MetaConfigs
{
    public static IReadOnlyList<MetaConfig> All { get; } =
    [
        new() { Name = "default" },
        new() { Name = "disk-mmap-wal", OnDisk = true, Family = Small, Db = o => o.MemoryMappedWal = true },
        new() { Name = "disk-plain-wal", OnDisk = true, Family = Small, Db = o => o.MemoryMappedWal = false },
        new() { Name = "tiny-none", Family = o => Tiny(o, KvCompressionType.None) },
        new() { Name = "tiny-snappy", Family = o => Tiny(o, KvCompressionType.Snappy) },
        new() { Name = "tiny-lz4-crc32c", Family = o => { Tiny(o, KvCompressionType.Lz4); o.Checksum = KvChecksumType.Crc32C; } },
        new() { Name = "tiny-zstd", Family = o => Tiny(o, KvCompressionType.Zstd) },
        new() { Name = "lz4hc-bottom-zstd", Family = o => { Small(o); o.Compression = KvCompressionType.Lz4HC; o.BottommostCompression = KvCompressionType.Zstd; } },
        new() { Name = "block-256", Family = o => { Small(o); o.BlockSize = 256; o.BlockRestartInterval = 2; } },
        new() { Name = "block-64k", Family = o => { Small(o); o.BlockSize = 64 << 10; } },
        new() { Name = "partitioned", Family = Partitioned },
        new()
        {
            Name = "partitioned-cached",
            Family = o => { Partitioned(o); o.CacheIndexAndFilterBlocks = true; o.PinL0FilterAndIndexBlocksInCache = true; },
            Cache = () => new KvBlockCache(64 << 10, numShardBits: 0),
        },
        new() { Name = "no-bloom", Family = o => { Small(o); o.BloomBitsPerKey = 0; } },
        new() { Name = "prefix-bloom", Family = o => { Small(o); o.PrefixExtractor = KvPrefixExtractor.FixedPrefix(ConfinedCursor.PrefixLength); } },
        new()
        {
            Name = "prefix-only-partitioned",
            Family = o => { Partitioned(o); o.PrefixExtractor = KvPrefixExtractor.FixedPrefix(ConfinedCursor.PrefixLength); o.WholeKeyFiltering = false; },
        },
        new()
        {
            Name = "cache-index-filter",
            Family = o => { Small(o); o.CacheIndexAndFilterBlocks = true; },
            Cache = () => new KvBlockCache(1 << 20, numShardBits: 1),
        },
        new() { Name = "tiny-cache", Family = Small, Cache = () => new KvBlockCache(8 << 10, numShardBits: 0) },
        new() { Name = "zero-cache", Family = Small, Cache = () => new KvBlockCache(0, numShardBits: 0) },
        new()
        {
            Name = "secondary-cache",
            Family = Small,
            Cache = () => new KvBlockCache(16 << 10, numShardBits: 0, compressedSecondaryCacheSize: 64 << 10),
        },
        new() { Name = "single-keyspace", Family = Small, SingleKeyspace = true },
        new() { Name = "read-compaction-off", Family = o => { Tiny(o, KvCompressionType.Lz4); o.ReadTriggeredCompactionBytesPerMiss = 0; o.Level0FileNumCompactionTrigger = 8; } },
        new() { Name = "read-compaction-eager", Family = o => { Tiny(o, KvCompressionType.Lz4); o.ReadTriggeredCompactionBytesPerMiss = 1 << 20; o.Level0FileNumCompactionTrigger = 8; } },
        new() { Name = "no-memtable-hash", Family = o => { Small(o); o.MemTableHashIndexRatio = 0; } },
        new() { Name = "merged-memtables", Family = o => { Tiny(o, KvCompressionType.Snappy); o.MaxWriteBufferNumber = 4; o.MinWriteBufferNumberToMerge = 2; } },
        new() { Name = "no-auto-compaction", Family = o => { Tiny(o, KvCompressionType.None); o.DisableAutoCompactions = true; } },
        new()
        {
            Name = "dynamic-levels-round-robin",
            Family = o => { Tiny(o, KvCompressionType.Lz4); o.LevelCompactionDynamicLevelBytes = true; o.CompactionPri = CompactionPri.RoundRobin; },
        },
        new() { Name = "universal", Family = o => { Tiny(o, KvCompressionType.Lz4); o.CompactionStyle = CompactionStyle.Universal; } },
        new()
        {
            Name = "universal-trivial-similar",
            Family = o =>
            {
                Tiny(o, KvCompressionType.Snappy);
                o.CompactionStyle = CompactionStyle.Universal;
                o.Level0FileNumCompactionTrigger = 3;
                o.CompactionOptionsUniversal = new CompactionOptionsUniversal
                {
                    AllowTrivialMove = true,
                    StopStyle = CompactionStopStyle.SimilarSize,
                    SizeRatio = 20,
                    MaxMergeWidth = 3,
                    CompressionSizePercent = 50,
                    MaxSizeAmplificationPercent = 100,
                };
            },
        },
        new()
        {
            Name = "few-open-files-one-job",
            Family = o => Tiny(o, KvCompressionType.Snappy),
            Db = o => { o.MaxOpenFiles = 20; o.MaxBackgroundJobs = 1; },
        },
    ];

    /// <summary>Flushes every 32 KiB, level-1 target 64 KiB in 16 KiB files.</summary>
    private static void Small(ColumnFamilyOptions o)
    {
        o.WriteBufferSize = 32 << 10;
        o.TargetFileSizeBase = 16 << 10;
        o.MaxBytesForLevelBase = 64 << 10;
        o.Level0FileNumCompactionTrigger = 2;
    }

    /// <summary>Flushes every 8 KiB, level-1 target 16 KiB in 4 KiB files, levels growing by 2: many levels.</summary>
    private static void Tiny(ColumnFamilyOptions o, KvCompressionType compression)
    {
        o.WriteBufferSize = 8 << 10;
        o.TargetFileSizeBase = 4 << 10;
        o.MaxBytesForLevelBase = 16 << 10;
        o.MaxBytesForLevelMultiplier = 2;
        o.Level0FileNumCompactionTrigger = 2;
        o.Compression = compression;
    }

    /// <summary>Partitioned index and filters with small partitions and blocks.</summary>
    private static void Partitioned(ColumnFamilyOptions o)
    {
        Small(o);
        o.BlockSize = 512;
        o.IndexType = KvIndexType.TwoLevelIndexSearch;
        o.PartitionFilters = true;
        o.MetadataBlockSize = 256;
    }
}
