using System.Text;
using KvEngine.Versions;
using Version = KvEngine.Versions.Version;

namespace KvEngine.OptionsFile;

// OPTIONS file := header_comment "\n" version_section db_section (cf_section table_section)+
//   header_comment := "# This is a RocksDB option file." ... five lines, see Header
//   version_section := "[Version]\n" "  rocksdb_version=7.8.3\n" "  options_file_version=1.1\n"
//   db_section      := "\n[DBOptions]\n" ("  name=value\n")* "  \n"
//   cf_section      := "\n[CFOptions \"" escaped_name "\"]\n" ("  name=value\n")* "  \n"
//   table_section   := "[TableOptions/BlockBasedTable \"" escaped_name "\"]\n" ("  name=value\n")* "  \n"
// ("  \n" is the empty option string RocksDB appends after each section's options.)

/// <summary>
/// Renders a database's options as RocksDB 7.8's PersistRocksDBOptions does: the
/// [DBOptions] section, then one [CFOptions "name"] and [TableOptions/BlockBasedTable "name"]
/// pair per column family, "default" first, every option RocksDB writes in its order
/// (<see cref="OptionsFileTemplate"/>), KvEngine's settings under RocksDB's names and spellings.
/// Options KvEngine has that RocksDB 7.8 lacks are not written (7.8 refuses unknown options):
/// decouple_partitioned_filters, the write-thread spin count and the compressed secondary cache.
/// Stateless and thread-safe.
/// </summary>
internal static class OptionsFileWriter
{
    private const string Header =
        "# This is a RocksDB option file.\n" +
        "#\n" +
        "# For detailed file format spec, please refer to the example file\n" +
        "# in examples/rocksdb_option_file_example.ini\n" +
        "#\n" +
        "\n";

    public const string DbOptionsSection = "DBOptions";
    public const string VersionSection = "Version";
    public const string CfOptionsSection = "CFOptions";
    public const string BlockBasedTableSection = "TableOptions/BlockBasedTable";
    public const string DefaultColumnFamilyName = "default";

    /// <summary>
    /// The file's text for <paramref name="db"/>'s database-wide options and
    /// <paramref name="families"/> (the first must be "default"; names distinct).
    /// </summary>
    public static string Format(KvOptions db, IReadOnlyList<(string Name, ColumnFamilyOptions Options)> families)
    {
        ArgumentNullException.ThrowIfNull(db);
        ArgumentNullException.ThrowIfNull(families);
        if (families.Count == 0 || families[0].Name != DefaultColumnFamilyName)
        {
            throw new ArgumentException("The first column family must be \"default\".", nameof(families));
        }
        var names = new HashSet<string>(StringComparer.Ordinal);
        foreach ((string name, ColumnFamilyOptions options) in families)
        {
            ArgumentNullException.ThrowIfNull(options, nameof(families));
            if (!names.Add(name))
            {
                throw new ArgumentException($"Column family '{name}' appears twice.", nameof(families));
            }
        }

        var sb = new StringBuilder(16 * 1024);
        sb.Append(Header);
        sb.Append('[').Append(VersionSection).Append("]\n");
        sb.Append("  rocksdb_version=").Append(OptionsFileTemplate.RocksDbVersion).Append('\n');
        sb.Append("  options_file_version=").Append(OptionsFileTemplate.OptionsFileVersion).Append('\n');
        sb.Append('\n');
        sb.Append('[').Append(DbOptionsSection).Append("]\n");
        AppendSection(sb, OptionsFileTemplate.DbOptions, DbValues(db));
        sb.Append('\n');
        for (int i = 0; i < families.Count; i++)
        {
            (string name, ColumnFamilyOptions options) = families[i];
            if (i > 0)
            {
                sb.Append('\n');
            }
            string escaped = Escape(name);
            sb.Append('[').Append(CfOptionsSection).Append(" \"").Append(escaped).Append("\"]\n");
            AppendSection(sb, OptionsFileTemplate.CfOptions, CfValues(options));
            sb.Append('[').Append(BlockBasedTableSection).Append(" \"").Append(escaped).Append("\"]\n");
            AppendSection(sb, OptionsFileTemplate.BlockBasedTableOptions, TableValues(options));
        }
        return sb.ToString();
    }

    /// <summary>RocksDB's EscapeOptionString: a backslash before '\', ':', '#', '"' and line breaks.</summary>
    public static string Escape(string value)
    {
        var sb = new StringBuilder(value.Length);
        foreach (char c in value)
        {
            switch (c)
            {
                case '\n': sb.Append("\\n"); break;
                case '\r': sb.Append("\\r"); break;
                case '\t': sb.Append("\\t"); break;
                case '\\' or ':' or '#' or '"': sb.Append('\\').Append(c); break;
                default: sb.Append(c); break;
            }
        }
        return sb.ToString();
    }

    private static void AppendSection(StringBuilder sb, (string Name, string Value)[] template, Dictionary<string, string> values)
    {
        foreach ((string name, string fixedValue) in template)
        {
            sb.Append("  ").Append(name).Append('=').Append(values.TryGetValue(name, out string? v) ? v : fixedValue).Append('\n');
        }
        sb.Append("  \n");
    }

    private static Dictionary<string, string> DbValues(KvOptions o) => new(StringComparer.Ordinal)
    {
        ["create_if_missing"] = OptionValues.Format(o.CreateIfMissing),
        ["error_if_exists"] = OptionValues.Format(o.ErrorIfExists),
        ["paranoid_checks"] = OptionValues.Format(o.ParanoidChecks),
        ["best_efforts_recovery"] = OptionValues.Format(o.BestEffortsRecovery),
        ["wal_recovery_mode"] = OptionValues.FormatEnum(o.WalRecoveryMode, OptionValues.WalRecoveryModeNames),
        ["allow_concurrent_memtable_write"] = OptionValues.Format(o.AllowConcurrentMemtableWrite),
        ["max_bgerror_resume_count"] = OptionValues.Format((long)o.MaxBackgroundErrorResumeCount),
        ["bgerror_resume_retry_interval"] = OptionValues.Format(o.BackgroundErrorResumeRetryInterval.Ticks / TimeSpan.TicksPerMicrosecond),
        ["max_background_jobs"] = OptionValues.Format((long)o.MaxBackgroundJobs),
        ["max_open_files"] = OptionValues.Format((long)o.MaxOpenFiles),
        ["create_missing_column_families"] = OptionValues.Format(o.CreateMissingColumnFamilies),
        ["atomic_flush"] = OptionValues.Format(o.AtomicFlush),
        ["max_total_wal_size"] = OptionValues.Format(o.MaxTotalWalSize),
        ["delayed_write_rate"] = OptionValues.Format(o.DelayedWriteRate),
        ["use_direct_reads"] = OptionValues.Format(o.UseDirectReads),
        ["advise_random_on_open"] = OptionValues.Format(o.AdviseRandomOnOpen),
        ["use_direct_io_for_flush_and_compaction"] = OptionValues.Format(o.UseDirectIoForFlushAndCompaction),
        ["compaction_readahead_size"] = OptionValues.Format((long)o.CompactionReadaheadSize),
    };

    private static Dictionary<string, string> CfValues(ColumnFamilyOptions o)
    {
        string fifo = OptionValues.FormatStruct(
            ("allow_compaction", OptionValues.Format(o.FifoAllowCompaction)),
            ("age_for_warm", "0"),
            ("max_table_files_size", OptionValues.Format(o.FifoMaxTableFilesSize)));
        // RocksDB persists ttl and periodic_compaction_seconds as SanitizeOptions resolved them.
        (ulong ttl, ulong periodic) = Compaction.CompactionOptions.ResolveTimes(o.CompactionStyle, o.Ttl, o.PeriodicCompactionSeconds,
            o.CompactionFilter != null);
        return new(StringComparer.Ordinal)
        {
            ["ttl"] = ttl.ToString(System.Globalization.CultureInfo.InvariantCulture),
            ["periodic_compaction_seconds"] = periodic.ToString(System.Globalization.CultureInfo.InvariantCulture),
            ["compression_opts"] = CompressionOpts(enabled: false, o.CompressionLevel),
            ["bottommost_compression_opts"] = CompressionOpts(o.BottommostCompressionLevel != null, o.BottommostCompressionLevel ?? ColumnFamilyOptions.DefaultCompressionLevel),
            ["compression"] = OptionValues.FormatEnum(o.Compression, OptionValues.CompressionNames),
            ["bottommost_compression"] = o.BottommostCompression is { } bottom ? OptionValues.FormatEnum(bottom, OptionValues.CompressionNames) : OptionValues.DisableCompressionOption,
            ["write_buffer_size"] = OptionValues.Format(o.WriteBufferSize),
            ["merge_operator"] = MergeOperatorOption.Format(o.MergeOperator),
            ["prefix_extractor"] = Prefix.PrefixExtractorNames.Format(o.PrefixExtractor),
            // RocksDB persists arena_block_size sanitized from write_buffer_size (min(1 MiB, size / 8),
            // 4 KiB aligned); a larger arena block than the write buffer trips its memtable asserts.
            ["arena_block_size"] = OptionValues.Format(ArenaBlockSize(o.WriteBufferSize)),
            ["max_write_buffer_number"] = OptionValues.Format((long)o.MaxWriteBufferNumber),
            // RocksDB persists the sanitized value: at most max_write_buffer_number - 1.
            ["min_write_buffer_number_to_merge"] = OptionValues.Format((long)Math.Min(o.MinWriteBufferNumberToMerge, Math.Max(1, o.MaxWriteBufferNumber - 1))),
            ["disable_auto_compactions"] = OptionValues.Format(o.DisableAutoCompactions),
            ["compaction_filter"] = o.CompactionFilter?.Name is { Length: > 0 } filterName ? Escape(filterName) : "nullptr",
            ["level0_file_num_compaction_trigger"] = OptionValues.Format((long)o.Level0FileNumCompactionTrigger),
            ["level0_slowdown_writes_trigger"] = OptionValues.Format((long)o.Level0SlowdownWritesTrigger),
            ["level0_stop_writes_trigger"] = OptionValues.Format((long)o.Level0StopWritesTrigger),
            ["max_bytes_for_level_base"] = OptionValues.Format(o.MaxBytesForLevelBase),
            ["max_bytes_for_level_multiplier"] = OptionValues.Format(o.MaxBytesForLevelMultiplier),
            ["level_compaction_dynamic_level_bytes"] = OptionValues.Format(o.LevelCompactionDynamicLevelBytes),
            ["target_file_size_base"] = OptionValues.Format(o.TargetFileSizeBase),
            ["target_file_size_multiplier"] = OptionValues.Format((long)o.TargetFileSizeMultiplier),
            // 0 means 25 x target_file_size_base; RocksDB persists the sanitized value.
            ["max_compaction_bytes"] = OptionValues.Format(o.MaxCompactionBytes > 0 ? o.MaxCompactionBytes : o.TargetFileSizeBase * 25),
            ["level_compaction_dynamic_file_size"] = OptionValues.Format(o.LevelCompactionDynamicFileSize),
            ["compaction_style"] = OptionValues.FormatEnum(o.CompactionStyle, OptionValues.CompactionStyleNames),
            ["compaction_pri"] = OptionValues.FormatEnum(o.CompactionPri, OptionValues.CompactionPriNames),
            ["compaction_options_fifo"] = fifo,
            ["compaction_options_universal"] = Universal(o.CompactionOptionsUniversal ?? new CompactionOptionsUniversal()),
        };
    }

    /// <summary>compaction_options_universal in RocksDB 7.8's field order; int.MaxValue widths as its unsigned maximum.</summary>
    private static string Universal(CompactionOptionsUniversal u) => OptionValues.FormatStruct(
        ("incremental", "false"),
        ("compression_size_percent", OptionValues.Format((long)u.CompressionSizePercent)),
        ("allow_trivial_move", OptionValues.Format(u.AllowTrivialMove)),
        ("max_size_amplification_percent", Unsigned(u.MaxSizeAmplificationPercent)),
        ("max_merge_width", Unsigned(u.MaxMergeWidth)),
        ("stop_style", OptionValues.FormatEnum(u.StopStyle, OptionValues.StopStyleNames)),
        ("min_merge_width", Unsigned(u.MinMergeWidth)),
        ("size_ratio", Unsigned(u.SizeRatio)));

    private static string Unsigned(int value) => value == int.MaxValue ? uint.MaxValue.ToString(System.Globalization.CultureInfo.InvariantCulture)
        : OptionValues.Format((long)value);

    private static Dictionary<string, string> TableValues(ColumnFamilyOptions o)
    {
        KvMetadataCacheOptions pinning = o.MetadataCacheOptions ?? new KvMetadataCacheOptions();
        return new(StringComparer.Ordinal)
        {
            ["checksum"] = OptionValues.FormatEnum(o.Checksum, OptionValues.ChecksumNames),
            ["block_size"] = OptionValues.Format((long)o.BlockSize),
            ["block_restart_interval"] = OptionValues.Format((long)o.BlockRestartInterval),
            ["filter_policy"] = OptionValues.FormatBloomFilter(o.BloomBitsPerKey),
            ["optimize_filters_for_memory"] = OptionValues.Format(o.OptimizeFiltersForMemory),
            ["whole_key_filtering"] = OptionValues.Format(o.WholeKeyFiltering),
            ["cache_index_and_filter_blocks"] = OptionValues.Format(o.CacheIndexAndFilterBlocks),
            ["pin_l0_filter_and_index_blocks_in_cache"] = OptionValues.Format(o.PinL0FilterAndIndexBlocksInCache),
            ["pin_top_level_index_and_filter"] = OptionValues.Format(o.PinTopLevelIndexAndFilter),
            ["index_type"] = OptionValues.FormatEnum(o.IndexType, OptionValues.IndexTypeNames),
            ["partition_filters"] = OptionValues.Format(o.PartitionFilters),
            ["metadata_block_size"] = OptionValues.Format((long)o.MetadataBlockSize),
            ["data_block_index_type"] = OptionValues.FormatEnum(o.DataBlockIndexType, OptionValues.DataBlockIndexTypeNames),
            ["data_block_hash_table_util_ratio"] = OptionValues.Format(o.DataBlockHashTableUtilRatio),
            ["metadata_cache_options"] = OptionValues.FormatStruct(
                ("unpartitioned_pinning", OptionValues.FormatEnum(pinning.UnpartitionedPinning, OptionValues.PinningTierNames)),
                ("partition_pinning", OptionValues.FormatEnum(pinning.PartitionPinning, OptionValues.PinningTierNames)),
                ("top_level_index_pinning", OptionValues.FormatEnum(pinning.TopLevelIndexPinning, OptionValues.PinningTierNames))),
        };
    }

    private static long ArenaBlockSize(long writeBufferSize)
    {
        const long Align = 4 * 1024;
        long size = Math.Min(1L << 20, writeBufferSize / 8);
        return (size + Align - 1) / Align * Align;
    }

    private static string CompressionOpts(bool enabled, int level) => OptionValues.FormatStruct(
        ("max_dict_buffer_bytes", "0"),
        ("enabled", OptionValues.Format(enabled)),
        ("max_dict_bytes", "0"),
        ("parallel_threads", "1"),
        ("zstd_max_train_bytes", "0"),
        ("level", OptionValues.Format((long)level)),
        ("use_zstd_dict_trainer", "true"),
        ("strategy", "0"),
        ("window_bits", "-14"));
}
