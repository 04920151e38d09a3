namespace KvEngine.OptionsFile;

/// <summary>
/// Maps one OPTIONS-file option (RocksDB's name and spelling) onto KvEngine's options: the
/// inverse of <see cref="OptionsFileWriter"/>. Options KvEngine has no counterpart for are
/// ignored (as RocksDB's ignore_unknown_options, and for settings that only shape how tables are
/// laid out, which KvEngine reads in any form). Values KvEngine cannot honour throw
/// <see cref="KvException"/>; malformed values throw <see cref="OptionsFormatException"/>.
/// Stateless and thread-safe.
/// </summary>
internal static class OptionsMapper
{
    public static void ApplyDbOption(KvOptions o, string name, string value)
    {
        switch (name)
        {
            case "create_if_missing": o.CreateIfMissing = OptionValues.ParseBool(value); break;
            case "error_if_exists": o.ErrorIfExists = OptionValues.ParseBool(value); break;
            case "paranoid_checks": o.ParanoidChecks = OptionValues.ParseBool(value); break;
            case "best_efforts_recovery": o.BestEffortsRecovery = OptionValues.ParseBool(value); break;
            case "allow_concurrent_memtable_write": o.AllowConcurrentMemtableWrite = OptionValues.ParseBool(value); break;
            case "wal_recovery_mode":
                o.WalRecoveryMode = OptionValues.ParseEnum(value, OptionValues.WalRecoveryModeNames);
                break;
            case "max_bgerror_resume_count": o.MaxBackgroundErrorResumeCount = Math.Max(0, OptionValues.ParseInt32(value)); break;
            case "bgerror_resume_retry_interval":
                o.BackgroundErrorResumeRetryInterval = TimeSpan.FromMicroseconds(Math.Min(OptionValues.ParseUInt64Saturating(value), TimeSpan.MaxValue.Ticks / TimeSpan.TicksPerMicrosecond));
                break;
            case "max_background_jobs": o.MaxBackgroundJobs = OptionValues.ParseInt32(value); break;
            case "max_open_files": o.MaxOpenFiles = OptionValues.ParseInt32(value); break;
            case "create_missing_column_families": o.CreateMissingColumnFamilies = OptionValues.ParseBool(value); break;
            case "atomic_flush": o.AtomicFlush = OptionValues.ParseBool(value); break;
            case "use_direct_reads": o.UseDirectReads = OptionValues.ParseBool(value); break;
            case "advise_random_on_open": o.AdviseRandomOnOpen = OptionValues.ParseBool(value); break;
            case "use_direct_io_for_flush_and_compaction": o.UseDirectIoForFlushAndCompaction = OptionValues.ParseBool(value); break;
            case "compaction_readahead_size":
                o.CompactionReadaheadSize = (int)Math.Min(OptionValues.ParseUInt64Saturating(value), int.MaxValue);
                break;
            case "max_total_wal_size": o.MaxTotalWalSize = OptionValues.ParseUInt64Saturating(value); break;
            case "delayed_write_rate":
                // 0 means "derive from the rate limiter, else 16 MiB/s" in RocksDB.
                long rate = OptionValues.ParseUInt64Saturating(value);
                o.DelayedWriteRate = rate == 0 ? 16L << 20 : rate;
                break;
        }
    }

    public static void ApplyCfOption(ColumnFamilyOptions o, string name, string value)
    {
        switch (name)
        {
            case "comparator":
                if (value != "leveldb.BytewiseComparator")
                {
                    throw new KvNotSupportedException($"comparator '{value}' is not supported by KvEngine (bytewise order only).");
                }
                break;
            case "table_factory":
                if (value != "BlockBasedTable")
                {
                    throw new KvNotSupportedException($"table factory '{value}' is not supported by KvEngine (block-based tables only).");
                }
                break;
            case "compression": o.Compression = Compression(value); break;
            case "bottommost_compression":
                o.BottommostCompression = value == OptionValues.DisableCompressionOption ? null : Compression(value);
                break;
            case "compression_opts":
                o.CompressionLevel = CompressionLevel(value, out _);
                break;
            case "bottommost_compression_opts":
                int level = CompressionLevel(value, out bool enabled);
                o.BottommostCompressionLevel = enabled ? level : null;
                break;
            case "prefix_extractor":
                // A built-in extractor is rebuilt; a custom one (code) cannot be, and the family opens
                // without one: its tables are then read without prefix filtering, never wrongly.
                o.PrefixExtractor = Prefix.PrefixExtractorNames.TryCreate(value, out _);
                break;
            case "write_buffer_size": o.WriteBufferSize = OptionValues.ParseInt64(value, 0); break;
            case "max_write_buffer_number": o.MaxWriteBufferNumber = OptionValues.ParseInt32(value); break;
            case "min_write_buffer_number_to_merge": o.MinWriteBufferNumberToMerge = OptionValues.ParseInt32(value); break;
            case "disable_auto_compactions": o.DisableAutoCompactions = OptionValues.ParseBool(value); break;
            case "level0_file_num_compaction_trigger": o.Level0FileNumCompactionTrigger = OptionValues.ParseInt32(value); break;
            case "level0_slowdown_writes_trigger": o.Level0SlowdownWritesTrigger = OptionValues.ParseInt32(value); break;
            case "level0_stop_writes_trigger": o.Level0StopWritesTrigger = OptionValues.ParseInt32(value); break;
            case "max_bytes_for_level_base": o.MaxBytesForLevelBase = OptionValues.ParseUInt64Saturating(value); break;
            case "max_bytes_for_level_multiplier": o.MaxBytesForLevelMultiplier = OptionValues.ParseDouble(value); break;
            case "level_compaction_dynamic_level_bytes": o.LevelCompactionDynamicLevelBytes = OptionValues.ParseBool(value); break;
            case "target_file_size_base": o.TargetFileSizeBase = OptionValues.ParseUInt64Saturating(value); break;
            case "target_file_size_multiplier": o.TargetFileSizeMultiplier = OptionValues.ParseInt32(value); break;
            case "max_compaction_bytes": o.MaxCompactionBytes = OptionValues.ParseUInt64Saturating(value); break;
            case "level_compaction_dynamic_file_size": o.LevelCompactionDynamicFileSize = OptionValues.ParseBool(value); break;
            case "compaction_style":
                o.CompactionStyle = OptionValues.ParseEnum(value, OptionValues.CompactionStyleNames);
                break;
            case "compaction_pri":
                o.CompactionPri = OptionValues.ParseEnum(value, OptionValues.CompactionPriNames);
                break;
            case "ttl": o.Ttl = OptionValues.ParseSecondsOrDefault(value); break;
            case "periodic_compaction_seconds": o.PeriodicCompactionSeconds = OptionValues.ParseSecondsOrDefault(value); break;
            case "compaction_options_universal":
                ApplyUniversal(o.CompactionOptionsUniversal, OptionValues.ParseStruct(value));
                break;
            case "compaction_options_fifo":
                Dictionary<string, string> fifo = OptionValues.ParseStruct(value);
                if (fifo.TryGetValue("max_table_files_size", out string? max))
                {
                    o.FifoMaxTableFilesSize = OptionValues.ParseUInt64Saturating(max);
                }
                if (fifo.TryGetValue("allow_compaction", out string? allow))
                {
                    o.FifoAllowCompaction = OptionValues.ParseBool(allow);
                }
                break;
        }
    }

    /// <summary>
    /// compaction_options_universal's fields (RocksDB's spellings; unsigned widths saturate to
    /// int.MaxValue). incremental is accepted and has no effect: KvEngine's size-amplification
    /// picks always merge whole runs, which RocksDB also falls back to.
    /// </summary>
    private static void ApplyUniversal(CompactionOptionsUniversal u, Dictionary<string, string> fields)
    {
        foreach ((string name, string value) in fields)
        {
            switch (name)
            {
                case "size_ratio": u.SizeRatio = SaturatedInt32(value); break;
                case "min_merge_width": u.MinMergeWidth = SaturatedInt32(value); break;
                case "max_merge_width": u.MaxMergeWidth = SaturatedInt32(value); break;
                case "max_size_amplification_percent": u.MaxSizeAmplificationPercent = SaturatedInt32(value); break;
                case "compression_size_percent": u.CompressionSizePercent = OptionValues.ParseInt32(value); break;
                case "stop_style": u.StopStyle = OptionValues.ParseEnum(value, OptionValues.StopStyleNames); break;
                case "allow_trivial_move": u.AllowTrivialMove = OptionValues.ParseBool(value); break;
            }
        }
    }

    private static int SaturatedInt32(string value) => (int)Math.Min(OptionValues.ParseUInt64Saturating(value), int.MaxValue);

    /// <summary>
    /// Settles a family once all its options are read: FIFO settings a non-FIFO family carries
    /// unused (db_bench writes max_table_files_size=0) fall back to KvEngine's defaults, so they
    /// do not fail validation of options they cannot affect.
    /// </summary>
    public static void FinishFamily(ColumnFamilyOptions o)
    {
        if (o.CompactionStyle != CompactionStyle.Fifo && o.FifoMaxTableFilesSize < 1)
        {
            o.FifoMaxTableFilesSize = new ColumnFamilyOptions().FifoMaxTableFilesSize;
        }
    }

    public static void ApplyTableOption(ColumnFamilyOptions o, string name, string value)
    {
        switch (name)
        {
            case "checksum":
                o.Checksum = OptionValues.ParseEnum(value, OptionValues.ChecksumNames);
                break;
            case "block_size": o.BlockSize = OptionValues.ParseInt32(value); break;
            case "block_restart_interval": o.BlockRestartInterval = OptionValues.ParseInt32(value); break;
            case "filter_policy": o.BloomBitsPerKey = BloomBitsPerKey(value); break;
            case "whole_key_filtering": o.WholeKeyFiltering = OptionValues.ParseBool(value); break;
            case "optimize_filters_for_memory": o.OptimizeFiltersForMemory = OptionValues.ParseBool(value); break;
            case "cache_index_and_filter_blocks": o.CacheIndexAndFilterBlocks = OptionValues.ParseBool(value); break;
            case "pin_l0_filter_and_index_blocks_in_cache": o.PinL0FilterAndIndexBlocksInCache = OptionValues.ParseBool(value); break;
            case "pin_top_level_index_and_filter": o.PinTopLevelIndexAndFilter = OptionValues.ParseBool(value); break;
            case "index_type":
                o.IndexType = OptionValues.ParseEnum(value, OptionValues.IndexTypeNames);
                break;
            case "partition_filters": o.PartitionFilters = OptionValues.ParseBool(value); break;
            case "metadata_block_size": o.MetadataBlockSize = OptionValues.ParseInt32(value); break;
            case "data_block_index_type":
                o.DataBlockIndexType = OptionValues.ParseEnum(value, OptionValues.DataBlockIndexTypeNames);
                break;
            case "data_block_hash_table_util_ratio":
                double ratio = OptionValues.ParseDouble(value);
                o.DataBlockHashTableUtilRatio = ratio > 0 ? ratio : 0.75; // RocksDB's builder takes <= 0 as its default
                break;
            case "decouple_partitioned_filters": o.DecouplePartitionedFilters = OptionValues.ParseBool(value); break; // RocksDB >= 9.7
            case "metadata_cache_options":
                Dictionary<string, string> tiers = OptionValues.ParseStruct(value);
                var pinning = new KvMetadataCacheOptions();
                if (tiers.TryGetValue("top_level_index_pinning", out string? top))
                {
                    pinning.TopLevelIndexPinning = PinningTier(top);
                }
                if (tiers.TryGetValue("partition_pinning", out string? partition))
                {
                    pinning.PartitionPinning = PinningTier(partition);
                }
                if (tiers.TryGetValue("unpartitioned_pinning", out string? unpartitioned))
                {
                    pinning.UnpartitionedPinning = PinningTier(unpartitioned);
                }
                o.MetadataCacheOptions = pinning;
                break;
        }
    }

    private static KvCompressionType Compression(string value) => OptionValues.ParseEnum(value, OptionValues.CompressionNames);

    private static int CompressionLevel(string value, out bool enabled)
    {
        Dictionary<string, string> fields = OptionValues.ParseStruct(value);
        enabled = fields.TryGetValue("enabled", out string? e) && OptionValues.ParseBool(e);
        return fields.TryGetValue("level", out string? level) ? OptionValues.ParseInt32(level) : ColumnFamilyOptions.DefaultCompressionLevel;
    }

    private static KvPinningTier PinningTier(string value) => OptionValues.ParseEnum(value, OptionValues.PinningTierNames);

    /// <summary>
    /// filter_policy: "nullptr" (0), or a Bloom filter "bloomfilter:bits[:use_block_based_builder]"
    /// (also under its class names). Ribbon and custom filters are not built by KvEngine.
    /// </summary>
    private static double BloomBitsPerKey(string value)
    {
        if (value is "nullptr" or "")
        {
            return 0;
        }
        string[] parts = value.Split(':');
        if (parts[0] is "bloomfilter" or "rocksdb.BloomFilter" or "rocksdb.BuiltinBloomFilter" or "rocksdb.internal.FastLocalBloomFilter")
        {
            if (parts.Length is < 2 or > 3)
            {
                throw new OptionsFormatException($"'{value}' is not bloomfilter:bits_per_key[:bool]");
            }
            if (parts.Length == 3)
            {
                OptionValues.ParseBool(parts[2]);
            }
            double bits = OptionValues.ParseDouble(parts[1]);
            if (bits < 0 || bits > 100)
            {
                throw new OptionsFormatException($"bits per key {bits} is outside [0, 100]");
            }
            return bits;
        }
        throw new KvNotSupportedException($"filter policy '{value}' is not supported by KvEngine (Bloom filters only).");
    }
}
