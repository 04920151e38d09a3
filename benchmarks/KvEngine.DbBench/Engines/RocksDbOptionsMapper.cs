using RocksDbSharp;

namespace KvEngine.DbBench.Engines;

/// <summary>
/// Maps kvbench's db_bench flags onto release RocksDB's options through RocksDbSharp (its option
/// wrappers, and its C-API bindings for what the wrappers lack), the way db_bench 7.8 maps them,
/// and refuses the flags release RocksDB cannot honour rather than ignoring them. Every option a
/// flag covers is set explicitly, so a newer release's changed default (dynamic level bytes,
/// optimize_filters_for_memory) cannot change the shape of the run. Options no flag covers keep the
/// release's defaults, except <c>enable_pipelined_write</c>, which is on as in db_bench. Stateless.
/// </summary>
internal static class RocksDbOptionsMapper
{
    /// <summary>Throws <see cref="ArgumentException"/> naming every flag that <c>-engine=rocksdb</c> cannot map.</summary>
    public static void Validate(BenchFlags f)
    {
        var refused = new List<string>();
        foreach (string b in f.Benchmarks.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            if (b is "filterbench" or "cachebench")
            {
                refused.Add($"-benchmarks={b} (a KvEngine component benchmark; it has no RocksDB counterpart in kvbench)");
            }
        }
        if (f.MergeOperator.Length > 0)
        {
            refused.Add("-merge_operator (RocksDbSharp's merge operators call back into .NET per merge, which would measure the callbacks; compare with db_bench instead)");
        }
        if (f.UseCompressedSecondaryCache)
        {
            refused.Add("-use_compressed_secondary_cache / -compressed_secondary_cache_* (RocksDbSharp's C API has no compressed secondary cache)");
        }
        if (!f.LevelCompactionDynamicFileSize)
        {
            refused.Add("-level_compaction_dynamic_file_size=false (release RocksDB removed the option; its file sizes are always dynamic)");
        }
        if (f.NumColumnFamilies > 1)
        {
            refused.Add("-num_column_families above 1 (kvbench maps one options object; run RocksDB's own db_bench for several families, as compare.py does)");
        }
        if (f.InFlight > 0)
        {
            refused.Add("-inflight (RocksDB's C API has no asynchronous Get; its way to keep reads in flight is multireadrandom with -batch_size and -async_io, or -threads)");
        }
        if (refused.Count > 0)
        {
            throw new ArgumentException("-engine=rocksdb cannot map these flags:\n  " + string.Join("\n  ", refused));
        }
    }

    /// <summary>
    /// The database options for <paramref name="f"/>, with <paramref name="table"/> set as the
    /// block-based table factory and <paramref name="blockCache"/> (an LRU cache the caller destroys
    /// after the database) as its block cache.
    /// </summary>
    public static DbOptions Create(BenchFlags f, BlockBasedTableOptions table, IntPtr blockCache)
    {
        Native n = Native.Instance;
        table.SetBlockSize((ulong)f.BlockSize)
            .SetBlockCache(blockCache)
            .SetCacheIndexAndFilterBlocks(f.CacheIndexAndFilterBlocks)
            .SetPinL0FilterAndIndexBlocksInCache(f.PinL0FilterAndIndexBlocksInCache)
            .SetIndexType(f.IndexType == KvIndexType.TwoLevelIndexSearch ? BlockBasedTableIndexType.TwoLevelIndex : BlockBasedTableIndexType.Binary);
        if (f.BloomBits > 0)
        {
            // db_bench 7.8: NewBloomFilterPolicy(bloom_bits, false), the full-filter (fast local) Bloom.
            n.rocksdb_block_based_options_set_filter_policy(table.Handle, n.rocksdb_filterpolicy_create_bloom_full(f.BloomBits));
        }
        n.rocksdb_block_based_options_set_whole_key_filtering(table.Handle, Bool(f.WholeKeyFiltering));
        n.rocksdb_block_based_options_set_partition_filters(table.Handle, Bool(f.PartitionFilters));
        n.rocksdb_block_based_options_set_metadata_block_size(table.Handle, (ulong)f.MetadataBlockSize);
        n.rocksdb_block_based_options_set_data_block_index_type(table.Handle, (int)f.DataBlockIndexType);
        n.rocksdb_block_based_options_set_data_block_hash_ratio(table.Handle, f.DataBlockHashTableUtilRatio);
        n.rocksdb_block_based_options_set_decouple_partitioned_filters(table.Handle, Bool(f.DecouplePartitionedFilters));
        n.rocksdb_block_based_options_set_pin_top_level_index_and_filter(table.Handle, Bool(f.PinTopLevelIndexAndFilter));
        n.rocksdb_block_based_options_set_top_level_index_pinning_tier(table.Handle, (int)f.TopLevelIndexPinning);
        n.rocksdb_block_based_options_set_partition_pinning_tier(table.Handle, (int)f.PartitionPinning);
        n.rocksdb_block_based_options_set_unpartitioned_pinning_tier(table.Handle, (int)f.UnpartitionedPinning);
        n.rocksdb_block_based_options_set_optimize_filters_for_memory(table.Handle, Bool(f.OptimizeFiltersForMemory));
        // ChecksumType: kCRC32c = 1, kXXH3 = 4.
        n.rocksdb_block_based_options_set_checksum(table.Handle, f.ChecksumType == KvChecksumType.Crc32C ? (char)1 : (char)4);

        var o = new DbOptions()
            .SetCreateIfMissing(true)
            .SetBlockBasedTableFactory(table)
            .SetWriteBufferSize((ulong)f.WriteBufferSize)
            .SetMaxWriteBufferNumber(f.MaxWriteBufferNumber)
            .SetMinWriteBufferNumberToMerge(f.MinWriteBufferNumberToMerge)
            .SetCompression(MapCompression(f.CompressionType))
            .SetCompressionOptions(-14, f.CompressionLevel, 0, 0)
            .SetTargetFileSizeBase((ulong)f.TargetFileSizeBase)
            .SetMaxBytesForLevelBase((ulong)f.MaxBytesForLevelBase)
            .SetMaxBytesForLevelMultiplier(f.MaxBytesForLevelMultiplier)
            .SetLevelCompactionDynamicLevelBytes(f.LevelCompactionDynamicLevelBytes)
            .SetLevel0FileNumCompactionTrigger(f.Level0FileNumCompactionTrigger)
            .SetLevel0SlowdownWritesTrigger(f.Level0SlowdownWritesTrigger)
            .SetLevel0StopWritesTrigger(f.Level0StopWritesTrigger)
            .SetDisableAutoCompactions(f.DisableAutoCompactions ? 1 : 0)
            .SetAllowConcurrentMemtableWrite(f.AllowConcurrentMemtableWrite)
            .SetMaxOpenFiles(f.OpenFiles == 0 ? -1 : f.OpenFiles)
            .SetUseDirectReads(f.UseDirectReads)
            .SetUseDirectIoForFlushAndCompaction(f.UseDirectIoForFlushAndCompaction)
            .SetCompactionReadaheadSize((ulong)f.CompactionReadaheadSize);
        n.rocksdb_options_set_max_background_jobs(o.Handle, f.MaxBackgroundJobs);
        n.rocksdb_options_set_compaction_pri(o.Handle, f.CompactionPri == CompactionPri.RoundRobin ? 4 : 3);
        // db_bench's -enable_pipelined_write defaults to true (the library's to false).
        n.rocksdb_options_set_enable_pipelined_write(o.Handle, 1);
        if (f.CompactionStyle == CompactionStyle.Fifo)
        {
            n.rocksdb_options_set_compaction_style(o.Handle, 2);
            IntPtr fifo = n.rocksdb_fifo_compaction_options_create();
            n.rocksdb_fifo_compaction_options_set_max_table_files_size(fifo, f.FifoMaxTableFilesSizeMb > 0 ? (ulong)f.FifoMaxTableFilesSizeMb << 20 : 1UL << 30);
            n.rocksdb_fifo_compaction_options_set_allow_compaction(fifo, Bool(f.FifoAllowCompaction));
            n.rocksdb_options_set_fifo_compaction_options(o.Handle, fifo); // copied into the options
            n.rocksdb_fifo_compaction_options_destroy(fifo);
        }
        if (f.CompactionStyle == CompactionStyle.Universal)
        {
            n.rocksdb_options_set_compaction_style(o.Handle, 1);
            IntPtr u = n.rocksdb_universal_compaction_options_create();
            n.rocksdb_universal_compaction_options_set_size_ratio(u, f.UniversalSizeRatio);
            n.rocksdb_universal_compaction_options_set_min_merge_width(u, f.UniversalMinMergeWidth);
            n.rocksdb_universal_compaction_options_set_max_merge_width(u, f.UniversalMaxMergeWidth);
            n.rocksdb_universal_compaction_options_set_max_size_amplification_percent(u, f.UniversalMaxSizeAmplificationPercent);
            n.rocksdb_universal_compaction_options_set_compression_size_percent(u, f.UniversalCompressionSizePercent);
            n.rocksdb_universal_compaction_options_set_allow_trivial_move(u, Bool(f.UniversalAllowTrivialMove));
            n.rocksdb_options_set_universal_compaction_options(o.Handle, u); // copied into the options
            n.rocksdb_universal_compaction_options_destroy(u);
        }
        if (f.Ttl is { } ttl)
        {
            n.rocksdb_options_set_ttl(o.Handle, (ulong)ttl);
        }
        if (f.PeriodicCompactionSeconds is { } periodic)
        {
            n.rocksdb_options_set_periodic_compaction_seconds(o.Handle, (ulong)periodic);
        }
        if (f.PrefixSize > 0)
        {
            // db_bench 7.8: options.prefix_extractor = NewFixedPrefixTransform(prefix_size); the options own it.
            n.rocksdb_options_set_prefix_extractor(o.Handle, n.rocksdb_slicetransform_create_fixed_prefix((UIntPtr)(uint)f.PrefixSize));
        }
        if (f.RateLimiterBytesPerSec > 0)
        {
            // db_bench 7.8: NewGenericRateLimiter(rate, refill period, fairness 10, kWritesOnly). The
            // options keep their own reference to the limiter; the handle is released here.
            IntPtr limiter = n.rocksdb_ratelimiter_create(f.RateLimiterBytesPerSec, f.RateLimiterRefillPeriodUs, 10);
            n.rocksdb_options_set_ratelimiter(o.Handle, limiter);
            n.rocksdb_ratelimiter_destroy(limiter);
        }
        if (f.Statistics)
        {
            o.EnableStatistics();
        }
        return o;
    }

    /// <summary>An LRU block cache of -cache_size bytes in 2^-cache_numshardbits shards (-1: RocksDB picks); destroy with rocksdb_cache_destroy.</summary>
    public static IntPtr CreateBlockCache(BenchFlags f)
    {
        Native n = Native.Instance;
        IntPtr lru = n.rocksdb_lru_cache_options_create();
        n.rocksdb_lru_cache_options_set_capacity(lru, (UIntPtr)(ulong)f.CacheSize);
        n.rocksdb_lru_cache_options_set_num_shard_bits(lru, f.CacheNumShardBits);
        IntPtr cache = n.rocksdb_cache_create_lru_opts(lru);
        n.rocksdb_lru_cache_options_destroy(lru);
        return cache;
    }

    private static byte Bool(bool b) => b ? (byte)1 : (byte)0;

    private static RocksDbSharp.Compression MapCompression(KvCompressionType t) => t switch
    {
        KvCompressionType.None => RocksDbSharp.Compression.No,
        KvCompressionType.Snappy => RocksDbSharp.Compression.Snappy,
        KvCompressionType.Lz4 => RocksDbSharp.Compression.Lz4,
        KvCompressionType.Lz4HC => RocksDbSharp.Compression.Lz4hc,
        KvCompressionType.Zstd => RocksDbSharp.Compression.Zstd,
        _ => throw new ArgumentException($"-engine=rocksdb: compression {t} has no RocksDB mapping"),
    };
}
