using System.Globalization;

namespace KvEngine.DbBench;

/// <summary>
/// db_bench's flags with db_bench's spelling, meaning and defaults (RocksDB 7.8).
/// Flags of features not built yet are rejected with a message, as db_bench rejects unknown ones.
/// -compressed_secondary_cache_size also turns on -use_compressed_secondary_cache.
/// </summary>
internal sealed class BenchFlags
{
    /// <summary>-engine: kvengine (the default), rocksdb (release RocksDB through RocksDbSharp), zonetree (ZoneTree, a managed LSM) or lmdb (LMDB through LightningDB).</summary>
    public BenchEngineKind Engine { get; private set; } = BenchEngineKind.KvEngine;
    public string Db { get; private set; } = Path.Combine(Path.GetTempPath(), "kvbench");
    public string Benchmarks { get; private set; } = "fillseq,fillrandom,overwrite,readrandom,readseq";
    public long Num { get; private set; } = 1_000_000;
    public long Reads { get; private set; } = -1;
    public int Duration { get; private set; }
    public int Threads { get; private set; } = 1;
    public int KeySize { get; private set; } = 16;
    public int ValueSize { get; private set; } = 100;
    public double CompressionRatio { get; private set; } = 0.5;
    public KvCompressionType CompressionType { get; private set; } = KvCompressionType.Snappy;
    public int CompressionLevel { get; private set; } = KvOptions.DefaultCompressionLevel;
    public KvChecksumType ChecksumType { get; private set; } = KvChecksumType.XxHash3;
    public double BloomBits { get; private set; } = -1;

    /// <summary>db_bench's -prefix_size: a FixedPrefix extractor of this length when &gt; 0, and the key prefix length with -keys_per_prefix.</summary>
    public int PrefixSize { get; private set; }

    /// <summary>db_bench's -keys_per_prefix: keys start with an 8-byte prefix number (key number modulo num / keys_per_prefix); 0: plain keys.</summary>
    public long KeysPerPrefix { get; private set; }

    /// <summary>db_bench's -whole_key_filtering (BlockBasedTableOptions.whole_key_filtering).</summary>
    public bool WholeKeyFiltering { get; private set; } = true;

    /// <summary>db_bench's -prefix_same_as_start (ReadOptions.prefix_same_as_start).</summary>
    public bool PrefixSameAsStart { get; private set; }

    /// <summary>db_bench's -total_order_seek (ReadOptions.total_order_seek).</summary>
    public bool TotalOrderSeek { get; private set; }

    /// <summary>db_bench's -seek_missing_prefix: seekrandom targets get '1' at byte 8, a prefix never written (needs prefix_size &gt; 8).</summary>
    public bool SeekMissingPrefix { get; private set; }

    /// <summary>db_bench's -seek_nexts: Next calls after each seekrandom Seek.</summary>
    public int SeekNexts { get; private set; }
    public int BlockSize { get; private set; } = 4096;
    public long WriteBufferSize { get; private set; } = 64L << 20;
    public int MaxWriteBufferNumber { get; private set; } = 2;
    public int MinWriteBufferNumberToMerge { get; private set; } = 1;
    public double MemTableHashIndexRatio { get; private set; } = new ColumnFamilyOptions().MemTableHashIndexRatio;
    public bool MemTableHugePages { get; private set; } = new ColumnFamilyOptions().MemTableHugePages;

    public long ReadTriggeredCompactionBytesPerMiss { get; private set; } = new ColumnFamilyOptions().ReadTriggeredCompactionBytesPerMiss;
    /// <summary>
    /// -num_column_families: "default" and column_family_name_000001... (created at open unless
    /// -use_existing_db); the fill benchmarks and readrandom put key i in family i % N, as db_bench.
    /// </summary>
    public int NumColumnFamilies { get; private set; } = 1;
    /// <summary>Write operations of fill benchmarks and readwhilewriting's writer; -1: <see cref="Num"/>.</summary>
    public long Writes { get; private set; } = -1;
    public bool FinishAfterWrites { get; private set; }
    public long WritesPerRangeTombstone { get; private set; }
    public long RangeTombstoneWidth { get; private set; } = 100;
    public long MaxNumRangeTombstones { get; private set; }
    public long WritesBeforeDeleteRange { get; private set; }
    public bool ExpandRangeTombstones { get; private set; }
    public bool UseExistingDb { get; private set; }
    public bool DisableWal { get; private set; }
    public bool AllowConcurrentMemtableWrite { get; private set; } = true;
    public bool Sync { get; private set; }
    /// <summary>Seed base for the key generators; db_bench derives it from the current time when 0.</summary>
    public long Seed { get; private set; }

    /// <summary>The seed base in use: <see cref="Seed"/>, or (as db_bench) the time when it is 0.</summary>
    public long SeedBase { get; } = DateTime.UtcNow.Ticks / TimeSpan.TicksPerMillisecond;
    public bool Statistics { get; private set; }
    public bool Histogram { get; private set; }
    public bool VerifyChecksum { get; private set; } = true;
    public int ReportIntervalSeconds { get; private set; }

    /// <summary>kvbench's own: milliseconds between samples of the resident set (the breakdown at peak).</summary>
    public int MemorySampleMs { get; private set; } = 100;
    public long TargetFileSizeBase { get; private set; } = 64L << 20;
    public long MaxBytesForLevelBase { get; private set; } = 256L << 20;
    public double MaxBytesForLevelMultiplier { get; private set; } = 10;
    public int Level0FileNumCompactionTrigger { get; private set; } = 4;
    public int Level0SlowdownWritesTrigger { get; private set; } = 20;
    public int Level0StopWritesTrigger { get; private set; } = 36;
    public int MaxBackgroundJobs { get; private set; } = 2;
    public bool DisableAutoCompactions { get; private set; }

    /// <summary>db_bench's: the rate limiter of flush and compaction writes, bytes a second (0: none).</summary>
    public long RateLimiterBytesPerSec { get; private set; }

    /// <summary>db_bench's: the rate limiter's refill period in microseconds.</summary>
    public long RateLimiterRefillPeriodUs { get; private set; } = 100_000;

    /// <summary>db_bench's: read table files with O_DIRECT.</summary>
    public bool UseDirectReads { get; private set; }

    /// <summary>db_bench's: write flush and compaction outputs with O_DIRECT.</summary>
    public bool UseDirectIoForFlushAndCompaction { get; private set; }

    /// <summary>db_bench's: bytes compactions read ahead in each input (RocksDB's default, 2 MiB).</summary>
    public long CompactionReadaheadSize { get; private set; } = 2L << 20;
    public bool LevelCompactionDynamicFileSize { get; private set; } = true;
    public bool LevelCompactionDynamicLevelBytes { get; private set; }
    public bool OptimizeFiltersForMemory { get; private set; }
    public CompactionStyle CompactionStyle { get; private set; } = CompactionStyle.Level;
    public CompactionPri CompactionPri { get; private set; } = CompactionPri.MinOverlappingRatio;
    public long FifoMaxTableFilesSizeMb { get; private set; }
    public bool FifoAllowCompaction { get; private set; }

    /// <summary>db_bench's -universal_* flags (its defaults: RocksDB's CompactionOptionsUniversal).</summary>
    public int UniversalSizeRatio { get; private set; } = 1;
    public int UniversalMinMergeWidth { get; private set; } = 2;
    public int UniversalMaxMergeWidth { get; private set; } = int.MaxValue;
    public int UniversalMaxSizeAmplificationPercent { get; private set; } = 200;
    public int UniversalCompressionSizePercent { get; private set; } = -1;
    public bool UniversalAllowTrivialMove { get; private set; }

    /// <summary>db_bench's -ttl and -periodic_compaction_seconds (-1, null here: the engine's default, as db_bench leaves it).</summary>
    public long? Ttl { get; private set; }
    public long? PeriodicCompactionSeconds { get; private set; }
    public FilterBenchFlags Filter { get; } = new();
    public CacheBenchFlags Cache { get; } = new();
    public IoEngineBenchFlags IoEngine { get; } = new();
    public long CacheSize { get; private set; } = KvBlockCache.DefaultCapacity;
    public bool CacheSizeSet { get; private set; }
    public bool ThreadsSet { get; private set; }
    public int CacheNumShardBits { get; private set; } = -1;
    public int OpenFiles { get; private set; } = -1;
    public bool CacheIndexAndFilterBlocks { get; private set; }
    public bool PinL0FilterAndIndexBlocksInCache { get; private set; }
    public KvIndexType IndexType { get; private set; } = KvIndexType.BinarySearch;
    public bool PartitionFilters { get; private set; }
    public int MetadataBlockSize { get; private set; } = 4096;

    /// <summary>db_bench's -use_data_block_hash_index: kDataBlockBinaryAndHash when true, kDataBlockBinarySearch when false (the library's default when absent).</summary>
    public KvDataBlockIndexType DataBlockIndexType { get; private set; } = new ColumnFamilyOptions().DataBlockIndexType;

    /// <summary>db_bench's -data_block_hash_table_util_ratio (0.75).</summary>
    public double DataBlockHashTableUtilRatio { get; private set; } = 0.75;
    public bool DecouplePartitionedFilters { get; private set; } = true;

    /// <summary>db_bench's default is false (the library's is true).</summary>
    public bool PinTopLevelIndexAndFilter { get; private set; }
    public KvPinningTier TopLevelIndexPinning { get; private set; } = KvPinningTier.Fallback;
    public KvPinningTier PartitionPinning { get; private set; } = KvPinningTier.Fallback;
    public KvPinningTier UnpartitionedPinning { get; private set; } = KvPinningTier.Fallback;
    public bool UseCompressedSecondaryCache { get; private set; }
    public long CompressedSecondaryCacheSize { get; private set; } = 8L << 20;
    public KvCompressionType CompressedSecondaryCacheCompressionType { get; private set; } = KvCompressionType.Lz4;
    public bool CompressedSecondaryCacheSplit { get; private set; } = true;

    public long ReadCount => Reads < 0 ? Num : Reads;

    /// <summary>db_bench's -merge_operator: "" (none), "uint64add" or "stringappend" (the ones KvEngine has).</summary>
    public string MergeOperator { get; private set; } = "";

    /// <summary>db_bench's -mergereadpercent: percent of readrandommergerandom's operations that merge, the rest read (70).</summary>
    public int MergeReadPercent { get; private set; } = 70;

    /// <summary>db_bench's -merge_keys: the key space of the merge benchmarks; -1 means -num.</summary>
    public long MergeKeys { get; private set; } = -1;

    /// <summary>db_bench's -batch_size: keys per MultiGet in multireadrandom (1).</summary>
    public int BatchSize { get; private set; } = 1;

    /// <summary>
    /// db_bench's -multiread_batched: multireadrandom calls the batched MultiGet when true (KvEngine's
    /// MultiGet; RocksDB's rocksdb_batched_multi_get_cf) and one point lookup per key when false, as
    /// db_bench's vector MultiGet (per-key Gets) does.
    /// </summary>
    public bool MultiReadBatched { get; private set; }

    /// <summary>
    /// db_bench's -async_io: iterators read ahead asynchronously (KvEngine's ReadOptions.AsyncIO;
    /// RocksDB's ReadOptions::async_io). KvEngine's multireadrandom calls the asynchronous
    /// MultiGet with it once the library has one (see BenchRunner.IssueMultiGet).
    /// </summary>
    public bool AsyncIO { get; private set; }

    /// <summary>
    /// kvbench's -inflight: readrandom keeps this many GetAsync calls outstanding per thread (0: the
    /// synchronous Get loop). RocksDB's C API has no asynchronous Get: -engine=rocksdb, lmdb and
    /// zonetree refuse it.
    /// </summary>
    public int InFlight { get; private set; }

    /// <summary>db_bench's readwrites_: -num when neither -reads nor -writes is set, else the larger of them.</summary>
    public long ReadWriteCount => Writes < 0 && Reads < 0 ? Num : Math.Max(Writes, Reads);

    /// <summary>The key space of mergerandom and readrandommergerandom (db_bench's merge_keys_).</summary>
    public long MergeKeySpace => MergeKeys < 0 ? Num : MergeKeys;

    public long WriteCount => Writes < 0 ? Num : Writes;

    /// <summary>
    /// db_bench's trigger, after the <paramref name="written"/>-th write: a range tombstone every
    /// -writes_per_range_tombstone writes after -writes_before_delete_range, at most
    /// -max_num_range_tombstones of them (0 means none).
    /// </summary>
    public bool RangeTombstoneDue(long written)
    {
        long after = written - WritesBeforeDeleteRange;
        return WritesPerRangeTombstone > 0 && after > 0 && after / WritesPerRangeTombstone <= MaxNumRangeTombstones &&
            after % WritesPerRangeTombstone == 0;
    }

    /// <summary>-help, --help, -helpfull or --helpfull was given: print the flags and run nothing.</summary>
    public bool Help { get; private set; }

    public static BenchFlags Parse(string[] args)
    {
        var f = new BenchFlags();
        foreach (string raw in args)
        {
            string a = raw.StartsWith("--", StringComparison.Ordinal) ? raw[2..] : raw.StartsWith('-') ? raw[1..] : throw Bad(raw, "flags look like -name=value");
            int eq = a.IndexOf('=', StringComparison.Ordinal);
            string name = eq < 0 ? a : a[..eq];
            string value = eq < 0 ? "true" : a[(eq + 1)..];
            f.Set(name, value, raw);
        }
        if (f.KeySize < 8)
        {
            throw Bad("-key_size", "KvEngine's kvbench needs key_size >= 8 (the key number is 8 bytes, as in db_bench)");
        }
        if (f.KeysPerPrefix > 0 && f.PrefixSize > f.KeySize)
        {
            throw Bad("-prefix_size", "with -keys_per_prefix the prefix must fit in key_size");
        }
        if (f.SeekMissingPrefix && f.PrefixSize <= 8)
        {
            throw Bad("-seek_missing_prefix", "needs prefix_size > 8, as in db_bench");
        }
        if (f.InFlight > 0 && f.NumColumnFamilies > 1)
        {
            throw Bad("-inflight", "the asynchronous Get reads the default column family only: use -num_column_families=1");
        }
        return f;
    }

    private void Set(string name, string v, string raw)
    {
        switch (name)
        {
            case "help" or "helpfull" or "h": Help = true; break;
            case "engine":
                Engine = v.ToLowerInvariant() switch
                {
                    "kvengine" => BenchEngineKind.KvEngine,
                    "rocksdb" => BenchEngineKind.RocksDb,
                    "zonetree" => BenchEngineKind.ZoneTree,
                    "lmdb" => BenchEngineKind.Lmdb,
                    _ => throw Bad(raw, "expected kvengine, rocksdb, zonetree or lmdb"),
                };
                break;
            case "db": Db = v; break;
            case "benchmarks": Benchmarks = v; break;
            case "num": Num = Long(v, raw, 1); break;
            case "reads": Reads = Long(v, raw, -1); break;
            case "merge_operator":
                // db_bench's spellings; "put" and "max" (and put_v1, stringappendtest, sortlist) are
                // RocksDB test operators KvEngine does not ship.
                MergeOperator = v switch
                {
                    "" or "uint64add" or "stringappend" => v,
                    "put" or "put_v1" or "max" or "stringappendtest" or "sortlist" =>
                        throw Bad(raw, $"KvEngine has no '{v}' merge operator; kvbench takes uint64add or stringappend"),
                    _ => throw Bad(raw, "unknown merge operator; db_bench's names are put, put_v1, uint64add, stringappend, stringappendtest, max, sortlist"),
                };
                break;
            case "mergereadpercent": MergeReadPercent = (int)Long(v, raw, 0); break;
            case "merge_keys": MergeKeys = Long(v, raw, -1); break;
            case "batch_size": BatchSize = (int)Long(v, raw, 1); break;
            case "multiread_batched": MultiReadBatched = Bool(v, raw); break;
            case "async_io": AsyncIO = Bool(v, raw); break;
            case "inflight": InFlight = (int)Long(v, raw, 0); break;
            case "duration": Duration = (int)Long(v, raw, 0); break;
            case "threads": Threads = (int)Long(v, raw, 1); ThreadsSet = true; break;
            case "key_size": KeySize = (int)Long(v, raw, 1); break;
            case "value_size": ValueSize = (int)Long(v, raw, 0); break;
            case "compression_ratio": CompressionRatio = Double(v, raw); break;
            case "compression_type": CompressionType = Compression(v, raw); break;
            case "compression_level": CompressionLevel = (int)Long(v, raw, int.MinValue); break;
            case "checksum_type": ChecksumType = Checksum(v, raw); break;
            case "bloom_bits": BloomBits = Double(v, raw); break;
            case "prefix_size": PrefixSize = (int)Long(v, raw, 0); break;
            case "keys_per_prefix": KeysPerPrefix = Long(v, raw, 0); break;
            case "whole_key_filtering": WholeKeyFiltering = Bool(v, raw); break;
            case "prefix_same_as_start": PrefixSameAsStart = Bool(v, raw); break;
            case "total_order_seek": TotalOrderSeek = Bool(v, raw); break;
            case "seek_missing_prefix": SeekMissingPrefix = Bool(v, raw); break;
            case "seek_nexts": SeekNexts = (int)Long(v, raw, 0); break;
            case "block_size": BlockSize = (int)Long(v, raw, 256); break;
            case "write_buffer_size": WriteBufferSize = Long(v, raw, 4096); break;
            case "max_write_buffer_number": MaxWriteBufferNumber = (int)Long(v, raw, 2); break;
            case "min_write_buffer_number_to_merge": MinWriteBufferNumberToMerge = (int)Long(v, raw, 1); break;
            case "memtable_hash_index_ratio": MemTableHashIndexRatio = Double(v, raw); break;
            case "memtable_huge_pages": MemTableHugePages = Bool(v, raw); break;
            case "read_triggered_compaction_bytes_per_miss": ReadTriggeredCompactionBytesPerMiss = Long(v, raw, 0); break;
            case "num_column_families": NumColumnFamilies = (int)Long(v, raw, 1); break;
            case "writes": Writes = Long(v, raw, -1); break;
            case "finish_after_writes": FinishAfterWrites = Bool(v, raw); break;
            case "writes_per_range_tombstone": WritesPerRangeTombstone = Long(v, raw, 0); break;
            case "range_tombstone_width": RangeTombstoneWidth = Long(v, raw, 0); break;
            case "max_num_range_tombstones": MaxNumRangeTombstones = Long(v, raw, 0); break;
            case "writes_before_delete_range": WritesBeforeDeleteRange = Long(v, raw, 0); break;
            case "expand_range_tombstones": ExpandRangeTombstones = Bool(v, raw); break;
            case "use_existing_db": UseExistingDb = Bool(v, raw); break;
            case "disable_wal": DisableWal = Bool(v, raw); break;
            case "allow_concurrent_memtable_write": AllowConcurrentMemtableWrite = Bool(v, raw); break;
            case "sync": Sync = Bool(v, raw); break;
            case "seed": Seed = Long(v, raw, 0); break;
            case "statistics": Statistics = Bool(v, raw); break;
            case "histogram": Histogram = Bool(v, raw); break;
            case "verify_checksum": VerifyChecksum = Bool(v, raw); break;
            case "report_interval_seconds": ReportIntervalSeconds = (int)Long(v, raw, 0); break;
            case "memory_sample_ms": MemorySampleMs = (int)Long(v, raw, 1); break;
            case "optimize_filters_for_memory": OptimizeFiltersForMemory = Bool(v, raw); break;
            case "cache_size": CacheSize = Long(v, raw, 0); CacheSizeSet = true; break;
            case "cache_numshardbits": CacheNumShardBits = (int)Long(v, raw, -1); break;
            case "open_files": OpenFiles = (int)Long(v, raw, -1); break;
            case "cache_index_and_filter_blocks": CacheIndexAndFilterBlocks = Bool(v, raw); break;
            case "pin_l0_filter_and_index_blocks_in_cache": PinL0FilterAndIndexBlocksInCache = Bool(v, raw); break;
            case "partition_index_and_filters":
                if (Bool(v, raw))
                {
                    IndexType = KvIndexType.TwoLevelIndexSearch;
                    PartitionFilters = true;
                }
                break;
            case "partition_index":
                if (Bool(v, raw))
                {
                    IndexType = KvIndexType.TwoLevelIndexSearch;
                }
                break;
            case "index_type":
                IndexType = Long(v, raw, 0) switch
                {
                    0 => KvIndexType.BinarySearch,
                    2 => KvIndexType.TwoLevelIndexSearch,
                    _ => throw Bad(raw, "KvEngine writes kBinarySearch (0) or kTwoLevelIndexSearch (2)"),
                };
                break;
            case "metadata_block_size": MetadataBlockSize = (int)Long(v, raw, 1); break;
            case "use_data_block_hash_index":
                DataBlockIndexType = Bool(v, raw) ? KvDataBlockIndexType.BinaryAndHash : KvDataBlockIndexType.BinarySearch;
                break;
            case "data_block_hash_table_util_ratio":
                DataBlockHashTableUtilRatio = Double(v, raw);
                if (!(DataBlockHashTableUtilRatio > 0 && DataBlockHashTableUtilRatio <= 64))
                {
                    throw Bad(raw, "expected a ratio above 0, at most 64");
                }
                break;
            case "decouple_partitioned_filters": DecouplePartitionedFilters = Bool(v, raw); break;
            case "pin_top_level_index_and_filter": PinTopLevelIndexAndFilter = Bool(v, raw); break;
            case "top_level_index_pinning": TopLevelIndexPinning = Tier(v, raw); break;
            case "partition_pinning": PartitionPinning = Tier(v, raw); break;
            case "unpartitioned_pinning": UnpartitionedPinning = Tier(v, raw); break;
            case "use_compressed_secondary_cache": UseCompressedSecondaryCache = Bool(v, raw); break;
            case "compressed_secondary_cache_size": CompressedSecondaryCacheSize = Long(v, raw, 0); UseCompressedSecondaryCache = true; break;
            case "compressed_secondary_cache_compression_type": CompressedSecondaryCacheCompressionType = Compression(v, raw); break;
            case "compressed_secondary_cache_split": CompressedSecondaryCacheSplit = Bool(v, raw); break;
            case "target_file_size_base": TargetFileSizeBase = Long(v, raw, 1024); break;
            case "max_bytes_for_level_base": MaxBytesForLevelBase = Long(v, raw, 1024); break;
            case "max_bytes_for_level_multiplier": MaxBytesForLevelMultiplier = Double(v, raw); break;
            case "level0_file_num_compaction_trigger": Level0FileNumCompactionTrigger = (int)Long(v, raw, 1); break;
            case "level0_slowdown_writes_trigger": Level0SlowdownWritesTrigger = (int)Long(v, raw, 1); break;
            case "level0_stop_writes_trigger": Level0StopWritesTrigger = (int)Long(v, raw, 1); break;
            case "max_background_jobs": MaxBackgroundJobs = (int)Long(v, raw, 1); break;
            case "disable_auto_compactions": DisableAutoCompactions = Bool(v, raw); break;
            case "rate_limiter_bytes_per_sec": RateLimiterBytesPerSec = Long(v, raw, 0); break;
            case "rate_limiter_refill_period_us": RateLimiterRefillPeriodUs = Long(v, raw, 1); break;
            case "use_direct_reads": UseDirectReads = Bool(v, raw); break;
            case "use_direct_io_for_flush_and_compaction": UseDirectIoForFlushAndCompaction = Bool(v, raw); break;
            case "compaction_readahead_size": CompactionReadaheadSize = Long(v, raw, 0); break;
            case "level_compaction_dynamic_file_size": LevelCompactionDynamicFileSize = Bool(v, raw); break;
            case "level_compaction_dynamic_level_bytes": LevelCompactionDynamicLevelBytes = Bool(v, raw); break;
            case "compaction_style":
                CompactionStyle = Long(v, raw, 0) switch
                {
                    0 => CompactionStyle.Level,
                    1 => CompactionStyle.Universal,
                    2 => CompactionStyle.Fifo,
                    _ => throw Bad(raw, "KvEngine has leveled (0), universal (1) and FIFO (2) compaction"),
                };
                break;
            case "compaction_pri":
                CompactionPri = Long(v, raw, 0) switch
                {
                    3 => CompactionPri.MinOverlappingRatio,
                    4 => CompactionPri.RoundRobin,
                    _ => throw Bad(raw, "KvEngine picks files by kMinOverlappingRatio (3) or kRoundRobin (4)"),
                };
                break;
            case "fifo_compaction_max_table_files_size_mb": FifoMaxTableFilesSizeMb = Long(v, raw, 0); break;
            case "fifo_compaction_allow_compaction": FifoAllowCompaction = Bool(v, raw); break;
            case "universal_size_ratio": UniversalSizeRatio = (int)Math.Min(Long(v, raw, 0), int.MaxValue); break;
            case "universal_min_merge_width": UniversalMinMergeWidth = (int)Math.Min(Long(v, raw, 2), int.MaxValue); break;
            case "universal_max_merge_width": UniversalMaxMergeWidth = (int)Math.Min(Long(v, raw, 2), int.MaxValue); break;
            case "universal_max_size_amplification_percent": UniversalMaxSizeAmplificationPercent = (int)Math.Min(Long(v, raw, 0), int.MaxValue); break;
            case "universal_compression_size_percent": UniversalCompressionSizePercent = (int)Math.Min(Long(v, raw, -1), 100); break;
            case "universal_allow_trivial_move": UniversalAllowTrivialMove = Bool(v, raw); break;
            case "ttl": Ttl = Long(v, raw, -1) is var ttl and >= 0 ? ttl : null; break;
            case "periodic_compaction_seconds": PeriodicCompactionSeconds = Long(v, raw, -1) is var p and >= 0 ? p : null; break;
            default:
                _ = Filter.TrySet(name, v) || Cache.TrySet(name, v) || IoEngine.TrySet(name, v) ? 0 : throw Bad(raw, "unknown flag");
                break;
        }
    }

    private static long Long(string v, string raw, long min)
    {
        if (!long.TryParse(v, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long x) || x < min)
        {
            throw Bad(raw, $"expected an integer >= {min}");
        }
        return x;
    }

    private static double Double(string v, string raw) =>
        double.TryParse(v, NumberStyles.Float, CultureInfo.InvariantCulture, out double x) && !double.IsNaN(x) ? x : throw Bad(raw, "expected a number");

    private static bool Bool(string v, string raw) => v switch
    {
        "1" or "true" => true,
        "0" or "false" => false,
        _ => throw Bad(raw, "expected true/false or 1/0"),
    };

    private static KvCompressionType Compression(string v, string raw) => v.ToLowerInvariant() switch
    {
        "none" => KvCompressionType.None,
        "snappy" => KvCompressionType.Snappy,
        "lz4" => KvCompressionType.Lz4,
        "lz4hc" => KvCompressionType.Lz4HC,
        "zstd" => KvCompressionType.Zstd,
        "zlib" or "bzip2" or "xpress" => throw Bad(raw, "kvbench writes none, snappy, lz4, lz4hc or zstd"),
        _ => throw Bad(raw, "unknown compression type"),
    };

    private static KvChecksumType Checksum(string v, string raw) => v.ToLowerInvariant() switch
    {
        "kcrc32c" or "crc32c" => KvChecksumType.Crc32C,
        "kxxh3" or "xxh3" => KvChecksumType.XxHash3,
        _ => throw Bad(raw, "KvEngine writes kCRC32c or kXXH3"),
    };

    /// <summary>db_stress's numbering: 0 kFallback, 1 kNone, 2 kFlushedAndSimilar, 3 kAll.</summary>
    private static KvPinningTier Tier(string v, string raw) =>
        Long(v, raw, 0) is long t and <= 3 ? (KvPinningTier)t : throw Bad(raw, "expected 0 (fallback), 1 (none), 2 (flushed and similar) or 3 (all)");

    private static ArgumentException Bad(string raw, string why) => new($"Invalid flag '{raw}': {why}");
}
