using System.Reflection;
using KvEngine.OptionsFile;
using KvEngine.Versions;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Tests.OptionsFile;

/// <summary>
/// The OPTIONS-file writer and parser without a database: every persisted option survives a
/// write and parse, the text has RocksDB 7.8's layout, and malformed or unsupported files are
/// refused with the right exception.
/// </summary>
public class OptionsFileFormatTests
{
    /// <summary>Options not written to an OPTIONS file (objects, or absent from RocksDB 7.8), by name.</summary>
    internal static readonly HashSet<string> NotPersisted = new(StringComparer.Ordinal)
    {
        nameof(ColumnFamilyOptions.BlockCache), nameof(ColumnFamilyOptions.CompactionFilter),
        nameof(ColumnFamilyOptions.DecouplePartitionedFilters), nameof(ColumnFamilyOptions.MemTableHashIndexRatio), nameof(ColumnFamilyOptions.MemTableHugePages),
        nameof(ColumnFamilyOptions.ReadTriggeredCompactionBytesPerMiss),
        nameof(KvOptions.Statistics), nameof(KvOptions.RateLimiter), nameof(KvOptions.MeterFactory), nameof(KvOptions.LoggerFactory),
        nameof(KvOptions.TimeProvider),
        nameof(KvOptions.WriteThreadSpinIterations), nameof(KvOptions.MemoryMappedWal), nameof(KvOptions.CompressedSecondaryCacheSize),
        nameof(KvOptions.CompressedSecondaryCacheCompression), nameof(KvOptions.CompressedSecondaryCacheSplit),
    };

    /// <summary>Every persisted option differs from its default.</summary>
    internal static KvOptions NonDefaultOptions() => new()
    {
        CreateIfMissing = false,
        ErrorIfExists = true,
        AllowConcurrentMemtableWrite = false,
        WalRecoveryMode = WalRecoveryMode.AbsoluteConsistency,
        ParanoidChecks = false,
        BestEffortsRecovery = true,
        MaxBackgroundErrorResumeCount = 7,
        BackgroundErrorResumeRetryInterval = TimeSpan.FromMilliseconds(2500),
        MaxBackgroundJobs = 5,
        CreateMissingColumnFamilies = true,
        AtomicFlush = true,
        MaxTotalWalSize = 123 << 20,
        DelayedWriteRate = 8 << 20,
        UseDirectReads = true,
        AdviseRandomOnOpen = false,
        UseDirectIoForFlushAndCompaction = true,
        CompactionReadaheadSize = 512 << 10,
        MaxOpenFiles = 321,
        WriteBufferSize = 3 << 20,
        MaxWriteBufferNumber = 5,
        MinWriteBufferNumberToMerge = 2,
        BlockSize = 16384,
        BlockRestartInterval = 8,
        Compression = KvCompressionType.Lz4,
        CompressionLevel = -3,
        BottommostCompression = KvCompressionType.Zstd,
        BottommostCompressionLevel = 9,
        Checksum = KvChecksumType.Crc32C,
        BloomBitsPerKey = 9.5,
        PrefixExtractor = KvPrefixExtractor.CappedPrefix(6),
        WholeKeyFiltering = false,
        DisableAutoCompactions = true,
        Level0FileNumCompactionTrigger = 3,
        Level0SlowdownWritesTrigger = 11,
        Level0StopWritesTrigger = 17,
        MaxBytesForLevelBase = 123L << 20,
        MaxBytesForLevelMultiplier = 8.5,
        LevelCompactionDynamicLevelBytes = true,
        TargetFileSizeBase = 5L << 20,
        TargetFileSizeMultiplier = 2,
        MaxCompactionBytes = 77L << 20,
        LevelCompactionDynamicFileSize = false,
        OptimizeFiltersForMemory = true,
        CacheIndexAndFilterBlocks = true,
        PinL0FilterAndIndexBlocksInCache = true,
        IndexType = KvIndexType.TwoLevelIndexSearch,
        PartitionFilters = true,
        MetadataBlockSize = 8192,
        DataBlockIndexType = KvDataBlockIndexType.BinaryAndHash,
        DataBlockHashTableUtilRatio = 0.5,
        PinTopLevelIndexAndFilter = false,
        MetadataCacheOptions = new KvMetadataCacheOptions
        {
            TopLevelIndexPinning = KvPinningTier.All,
            PartitionPinning = KvPinningTier.FlushedAndSimilar,
            UnpartitionedPinning = KvPinningTier.None,
        },
        CompactionStyle = CompactionStyle.Fifo,
        CompactionPri = CompactionPri.RoundRobin,
        FifoMaxTableFilesSize = 5L << 30,
        FifoAllowCompaction = true,
        CompactionOptionsUniversal = new CompactionOptionsUniversal
        {
            SizeRatio = 7,
            MinMergeWidth = 3,
            MaxMergeWidth = 9,
            MaxSizeAmplificationPercent = 150,
            CompressionSizePercent = 40,
            StopStyle = CompactionStopStyle.SimilarSize,
            AllowTrivialMove = true,
        },
        Ttl = 600, // FIFO persists min(ttl, periodic) as its ttl: the smaller survives as it is
        PeriodicCompactionSeconds = 678,
        MergeOperator = new StringAppendOperator((byte)':'),
    };

    /// <summary>Asserts every persisted public option of <paramref name="actual"/> equals <paramref name="expected"/>'s.</summary>
    internal static void AssertPersistedEqual(ColumnFamilyOptions expected, ColumnFamilyOptions actual)
    {
        Type type = expected is KvOptions && actual is KvOptions ? typeof(KvOptions) : typeof(ColumnFamilyOptions);
        foreach (PropertyInfo p in type.GetProperties(BindingFlags.Public | BindingFlags.Instance))
        {
            if (NotPersisted.Contains(p.Name))
            {
                continue;
            }
            object? e = p.GetValue(expected);
            object? a = p.GetValue(actual);
            if (e is KvMergeOperator eo)
            {
                KvMergeOperator ao = Assert.IsAssignableFrom<KvMergeOperator>(a);
                Assert.Equal(eo.Name, ao.Name);
                if (eo is StringAppendOperator es)
                {
                    Assert.Equal(es.Delimiter.ToArray(), ((StringAppendOperator)ao).Delimiter.ToArray());
                }
                continue;
            }
            if (e is KvPrefixExtractor ep)
            {
                Assert.Equal(ep.Name, Assert.IsAssignableFrom<KvPrefixExtractor>(a).Name);
                continue;
            }
            if (e is CompactionOptionsUniversal eu)
            {
                var au = Assert.IsType<CompactionOptionsUniversal>(a);
                foreach (PropertyInfo up in typeof(CompactionOptionsUniversal).GetProperties(BindingFlags.Public | BindingFlags.Instance))
                {
                    Assert.True(Equals(up.GetValue(eu), up.GetValue(au)), $"{up.Name}: expected {up.GetValue(eu)}, got {up.GetValue(au)}");
                }
                continue;
            }
            if (e is KvMetadataCacheOptions em && a is KvMetadataCacheOptions am)
            {
                Assert.Equal((em.TopLevelIndexPinning, em.PartitionPinning, em.UnpartitionedPinning), (am.TopLevelIndexPinning, am.PartitionPinning, am.UnpartitionedPinning));
                continue;
            }
            Assert.True(Equals(e, a), $"{p.Name}: expected {e}, got {a}");
        }
    }

    private static OptionsFileContents RoundTrip(KvOptions db, params (string, ColumnFamilyOptions)[] families)
    {
        string text = OptionsFileWriter.Format(db, families);
        return OptionsFileParser.Parse(text, "test");
    }

    [Fact]
    public void EveryPersistedOptionSurvivesWriteAndParse()
    {
        KvOptions options = NonDefaultOptions();
        // The helper must cover every option: each persisted one differs from a default instance.
        var defaults = new KvOptions();
        foreach (PropertyInfo p in typeof(KvOptions).GetProperties(BindingFlags.Public | BindingFlags.Instance))
        {
            if (!NotPersisted.Contains(p.Name) && p.PropertyType != typeof(KvMetadataCacheOptions) && p.PropertyType != typeof(CompactionOptionsUniversal))
            {
                Assert.False(Equals(p.GetValue(defaults), p.GetValue(options)), $"{p.Name} is at its default in NonDefaultOptions()");
            }
        }
        foreach (PropertyInfo p in typeof(CompactionOptionsUniversal).GetProperties(BindingFlags.Public | BindingFlags.Instance))
        {
            Assert.False(Equals(p.GetValue(defaults.CompactionOptionsUniversal), p.GetValue(options.CompactionOptionsUniversal)),
                $"CompactionOptionsUniversal.{p.Name} is at its default in NonDefaultOptions()");
        }

        OptionsFileContents parsed = RoundTrip(options, ("default", options));
        KvOptions loaded = parsed.ToKvOptions();
        AssertPersistedEqual(options, loaded);
        Assert.Equal("7.8.3", parsed.RocksDbVersion);
    }

    [Fact]
    public void DefaultOptionsSurviveWriteAndParse()
    {
        var options = new KvOptions();
        KvOptions loaded = RoundTrip(options, ("default", options)).ToKvOptions();
        Assert.Equal(options.TargetFileSizeBase * 25, loaded.MaxCompactionBytes); // 0 persisted sanitized, as RocksDB does
        options.MaxCompactionBytes = options.TargetFileSizeBase * 25;
        // ttl and periodic_compaction_seconds are persisted resolved (RocksDB 7.8's SanitizeOptions).
        Assert.Equal(30L * 24 * 3600, loaded.Ttl);
        Assert.Equal(0, loaded.PeriodicCompactionSeconds);
        options.Ttl = 30L * 24 * 3600;
        options.PeriodicCompactionSeconds = 0;
        AssertPersistedEqual(options, loaded);
    }

    [Fact]
    public void SeveralFamiliesKeepTheirOwnOptionsAndNames()
    {
        var db = new KvOptions { Compression = KvCompressionType.Zstd, MaxCompactionBytes = 1 << 30, Ttl = 0, PeriodicCompactionSeconds = 0 };
        var hot = new ColumnFamilyOptions { Compression = KvCompressionType.None, WriteBufferSize = 1 << 20, BloomBitsPerKey = 0, MaxCompactionBytes = 1 << 30, Ttl = 99, PeriodicCompactionSeconds = 0 };
        var odd = new ColumnFamilyOptions { BlockSize = 32768, Checksum = KvChecksumType.Crc32C, MaxCompactionBytes = 1 << 30, Ttl = 0, PeriodicCompactionSeconds = 7 };
        const string oddName = "we:ird#name\\x\"q\nline";
        OptionsFileContents parsed = RoundTrip(db, ("default", db), ("hot", hot), (oddName, odd));

        Assert.Equal(["default", "hot", oddName], parsed.Families.Select(f => f.Name));
        AssertPersistedEqual(db.CloneFamily(), parsed.Families[0].Options);
        AssertPersistedEqual(hot, parsed.Families[1].Options);
        AssertPersistedEqual(odd, parsed.Families[2].Options);
        Assert.All(parsed.Families, f => Assert.Null(f.MergeOperator));
        Assert.Equal(KvCompressionType.Zstd, parsed.ToKvOptions().Compression);
    }

    [Fact]
    public void LayoutIsRocksDbs()
    {
        var options = new KvOptions { Compression = KvCompressionType.Lz4, BloomBitsPerKey = 10, IndexType = KvIndexType.TwoLevelIndexSearch };
        string text = OptionsFileWriter.Format(options, [("default", options), ("cf1", new ColumnFamilyOptions())]);
        string[] lines = text.Split('\n');
        Assert.Equal("# This is a RocksDB option file.", lines[0]);
        Assert.Equal(["", "[Version]", "  rocksdb_version=7.8.3", "  options_file_version=1.1", "", "[DBOptions]"], lines[5..11]);
        Assert.Contains("\n  compression=kLZ4Compression\n", text, StringComparison.Ordinal);
        Assert.Contains("\n  write_buffer_size=67108864\n", text, StringComparison.Ordinal);
        Assert.Contains("\n  filter_policy=bloomfilter:10:false\n", text, StringComparison.Ordinal);
        Assert.Contains("\n  index_type=kTwoLevelIndexSearch\n", text, StringComparison.Ordinal);
        Assert.Contains("\n  checksum=kXXH3\n", text, StringComparison.Ordinal);
        Assert.Contains("\n  max_bytes_for_level_multiplier=10.000000\n", text, StringComparison.Ordinal);
        // Sections as RocksDB separates them: a blank line before [DBOptions] and each [CFOptions], none before [TableOptions/...].
        Assert.Contains("  \n\n[CFOptions \"default\"]\n", text, StringComparison.Ordinal);
        Assert.Contains("  \n[TableOptions/BlockBasedTable \"default\"]\n", text, StringComparison.Ordinal);
        Assert.Contains("  \n\n[CFOptions \"cf1\"]\n", text, StringComparison.Ordinal);
        Assert.EndsWith("  enable_index_compression=true\n  \n", text, StringComparison.Ordinal);
        Assert.DoesNotContain("decouple_partitioned_filters", text, StringComparison.Ordinal); // 7.8 refuses unknown options
    }

    [Fact]
    public void SectionsListTheSameOptionsInTheSameOrderAsRocksDb()
    {
        // RocksDB 7.8.3's ldb wrote this file; ours must name the same options in the same order.
        string rocks = File.ReadAllText(Fixture("ldb-2-families-stringappend.ini"));
        var options = new KvOptions();
        string ours = OptionsFileWriter.Format(options, [("default", options), ("cf1", new ColumnFamilyOptions())]);
        Assert.Equal(OptionNames(rocks), OptionNames(ours));
    }

    private static List<string> OptionNames(string text) =>
        text.Split('\n').Select(l => l.Trim()).Where(l => l.Length > 0 && l[0] != '#')
            .Select(l => l[0] == '[' ? l : l[..l.IndexOf('=', StringComparison.Ordinal)]).ToList();

    internal static string Fixture(string name) => Path.Combine(AppContext.BaseDirectory, "OptionsFile", "Fixtures", name);

    private static OptionsFileContents ParseFixture(string name) => OptionsFileParser.Parse(File.ReadAllText(Fixture(name)), name);

    [Fact]
    public void ParsesDbBenchLz4File()
    {
        OptionsFileContents parsed = ParseFixture("dbbench-lz4.ini");
        Assert.Equal("7.8.3", parsed.RocksDbVersion);
        KvOptions o = parsed.ToKvOptions();
        Assert.Equal(KvCompressionType.Lz4, o.Compression);
        Assert.Equal(64L << 20, o.WriteBufferSize);
        Assert.Equal(KvChecksumType.XxHash3, o.Checksum);
        Assert.Equal(0, o.BloomBitsPerKey); // db_bench's default -bloom_bits=-1: filter_policy=nullptr
        Assert.Equal(KvIndexType.BinarySearch, o.IndexType);
        Assert.False(o.PinTopLevelIndexAndFilter);
        Assert.True(o.CreateIfMissing);
        Assert.Equal(-1, o.MaxOpenFiles);
        Assert.Equal(TimeSpan.FromSeconds(1), o.BackgroundErrorResumeRetryInterval);
        Assert.Equal(1677721600, o.MaxCompactionBytes);
        Assert.Equal(ColumnFamilyOptions.DefaultCompressionLevel, o.CompressionLevel);
        Assert.Null(o.BottommostCompression);
        Assert.Null(o.BottommostCompressionLevel);
        o.Validate();
    }

    [Fact]
    public void ParsesDbBenchPartitionedFifoFile()
    {
        KvOptions o = ParseFixture("dbbench-zstd-partitioned-fifo.ini").ToKvOptions();
        Assert.Equal(KvCompressionType.Zstd, o.Compression);
        Assert.Equal(1L << 20, o.WriteBufferSize);
        Assert.Equal(KvChecksumType.Crc32C, o.Checksum);
        Assert.Equal(10, o.BloomBitsPerKey);
        Assert.Equal(KvIndexType.TwoLevelIndexSearch, o.IndexType);
        Assert.True(o.PartitionFilters);
        Assert.True(o.CacheIndexAndFilterBlocks);
        Assert.Equal(8192, o.BlockSize);
        Assert.Equal(CompactionStyle.Fifo, o.CompactionStyle);
        Assert.True(o.FifoAllowCompaction);
        Assert.Equal(0, o.FifoMaxTableFilesSize); // db_bench's -fifo_compaction_max_table_files_size_mb=0, kept as read
        Assert.Equal(int.MaxValue, o.Level0StopWritesTrigger);
    }

    [Fact]
    public void ParsesEveryFamilyOfAMultiFamilyFile()
    {
        OptionsFileContents parsed = ParseFixture("dbbench-3-families.ini");
        Assert.Equal(["default", "column_family_name_000001", "column_family_name_000002"], parsed.Families.Select(f => f.Name));
        Assert.All(parsed.Families, f => Assert.Equal(KvCompressionType.Lz4, f.Options.Compression));
        Assert.Equal(KvCompressionType.Lz4, parsed.ToKvOptions().Compression);
    }

    [Fact]
    public void BuiltInMergeOperatorsAreRebuiltFromTheirOptionString()
    {
        // ldb opens the default family with StringAppendOperator(':'); cf1 was created without one.
        OptionsFileContents parsed = ParseFixture("ldb-2-families-stringappend.ini");
        Assert.Equal(["default", "cf1"], parsed.Families.Select(f => f.Name));
        var append = Assert.IsType<StringAppendOperator>(parsed.Families[0].Options.MergeOperator);
        Assert.Equal(":"u8.ToArray(), append.Delimiter.ToArray());
        Assert.Null(parsed.Families[1].Options.MergeOperator);
        Assert.IsType<StringAppendOperator>(parsed.ToKvOptions().MergeOperator);
        Assert.IsType<UInt64AddOperator>(OptionsFileParser.Parse(Cf("  merge_operator=UInt64AddOperator\n"), "t").Families[0].Options.MergeOperator);
    }

    [Fact]
    public void AMergeOperatorKvEngineLacksIsRefusedByLoadButKeptByTheFamilyList()
    {
        OptionsFileContents parsed = OptionsFileParser.Parse(Cf("  merge_operator={id=MyOperator;x=1;}\n"), "t");
        Assert.Equal("{id=MyOperator;x=1;}", parsed.Families[0].MergeOperator);
        KvException e = Assert.Throws<KvException>(() => parsed.ToKvOptions());
        Assert.IsNotType<KvCorruptionException>(e);
        Assert.Contains("MyOperator", e.Message, StringComparison.Ordinal);
    }

    private const string Minimal = "[Version]\n  rocksdb_version=7.8.3\n  options_file_version=1.1\n[DBOptions]\n  max_open_files=10\n[CFOptions \"default\"]\n  write_buffer_size=1048576\n[TableOptions/BlockBasedTable \"default\"]\n  block_size=8192\n";

    /// <summary><see cref="Minimal"/> with <paramref name="line"/> added to the default family's [CFOptions].</summary>
    private static string Cf(string line) => Minimal.Replace("  write_buffer_size=1048576\n", "  write_buffer_size=1048576\n" + line, StringComparison.Ordinal);

    [Fact]
    public void CommentsEscapesSpacesAndUnknownOptionsAreAccepted()
    {
        string text = Minimal.Replace("  max_open_files=10\n", "  max_open_files = 10   # trailing comment\n  some_future_option=whatever\n", StringComparison.Ordinal)
            + "[CFOptions \"a\\#b\"]\n  compression=kZSTD\n";
        OptionsFileContents parsed = OptionsFileParser.Parse(text, "t");
        Assert.Equal(10, parsed.DbOptions.MaxOpenFiles);
        Assert.Equal(1L << 20, parsed.Families[0].Options.WriteBufferSize);
        Assert.Equal(8192, parsed.Families[0].Options.BlockSize);
        Assert.Equal("a#b", parsed.Families[1].Name);
        Assert.Equal(KvCompressionType.Zstd, parsed.Families[1].Options.Compression);
        Assert.Equal(4L << 10, OptionsFileParser.Parse(Minimal.Replace("1048576", "4k", StringComparison.Ordinal), "t").Families[0].Options.WriteBufferSize);
    }

    public static TheoryData<string, string> MalformedFiles() => new()
    {
        { "no DBOptions", Minimal.Replace("[DBOptions]\n  max_open_files=10\n", "", StringComparison.Ordinal) },
        { "two DBOptions", Minimal + "[DBOptions]\n" },
        { "two Version", "[Version]\n" + Minimal },
        { "no default family", "[DBOptions]\n" },
        { "first family not default", Minimal.Replace("\"default\"", "\"other\"", StringComparison.Ordinal) },
        { "default twice", Minimal + "[CFOptions \"default\"]\n" },
        { "family twice", Minimal + "[CFOptions \"x\"]\n[CFOptions \"x\"]\n" },
        { "table options before family", "[DBOptions]\n[TableOptions/BlockBasedTable \"default\"]\n[CFOptions \"default\"]\n" },
        { "table options of another family", Minimal + "[CFOptions \"x\"]\n[TableOptions/BlockBasedTable \"y\"]\n" },
        { "unknown section", Minimal + "[Whatever]\n" },
        { "unquoted argument", Minimal + "[CFOptions x]\n" },
        { "unterminated header", Minimal + "[CFOptions \"x\"\n" },
        { "old file version", Minimal.Replace("options_file_version=1.1", "options_file_version=0.9", StringComparison.Ordinal) },
        { "bad file version", Minimal.Replace("options_file_version=1.1", "options_file_version=x", StringComparison.Ordinal) },
        { "line without =", Minimal + "  just_a_name\n" },
        { "option before any section", "  max_open_files=1\n" + Minimal },
        { "bad integer", Minimal.Replace("1048576", "lots", StringComparison.Ordinal) },
        { "integer overflow", Minimal.Replace("max_open_files=10", "max_open_files=99999999999", StringComparison.Ordinal) },
        { "bad boolean", Cf("  disable_auto_compactions=maybe\n") },
        { "bad double", Cf("  max_bytes_for_level_multiplier=ten\n") },
        { "bad enum", Cf("  compression=kBrotli\n") },
        { "bad struct", Cf("  compaction_options_fifo={allow_compaction=true;\n") },
        { "bad filter", Minimal.Replace("  block_size=8192\n", "  filter_policy=bloomfilter:x:false\n", StringComparison.Ordinal) },
        { "lone backslash", Cf("  compaction_filter=abc\\\n") },
    };

    [Theory]
    [MemberData(nameof(MalformedFiles))]
    public void MalformedFilesAreCorruption(string what, string text)
    {
        KvCorruptionException e = Assert.Throws<KvCorruptionException>(() => OptionsFileParser.Parse(text, "bad-file"));
        Assert.StartsWith("bad-file", e.Message, StringComparison.Ordinal);
        Assert.False(string.IsNullOrEmpty(what));
    }

    public static TheoryData<string, string> UnsupportedFiles() => new()
    {
        { "comparator", Cf("  comparator=rocksdb.ReverseBytewiseComparator\n") },
        { "table factory", Cf("  table_factory=PlainTable\n") },
        { "table section", Minimal + "[CFOptions \"p\"]\n[TableOptions/PlainTable \"p\"]\n" },
        { "codec", Cf("  compression=kZlibCompression\n") },
        { "checksum", Minimal.Replace("  block_size=8192\n", "  checksum=kxxHash64\n", StringComparison.Ordinal) },
        { "index", Minimal.Replace("  block_size=8192\n", "  index_type=kHashSearch\n", StringComparison.Ordinal) },
        { "ribbon", Minimal.Replace("  block_size=8192\n", "  filter_policy=ribbonfilter:10:-1\n", StringComparison.Ordinal) },
    };

    [Theory]
    [MemberData(nameof(UnsupportedFiles))]
    public void UnsupportedOptionsAreKvExceptionNotCorruption(string what, string text)
    {
        KvException e = Assert.Throws<KvNotSupportedException>(() => OptionsFileParser.Parse(text, "file"));
        Assert.IsNotType<KvCorruptionException>(e);
        Assert.Contains("not supported", e.Message, StringComparison.Ordinal);
        Assert.False(string.IsNullOrEmpty(what));
    }

    [Fact]
    public void DamagedFilesFailOnlyWithKvExceptions()
    {
        // Truncations and byte flips of a RocksDB-written file: parsed, or refused with KvException
        // (KvCorruptionException for damage) - never another exception type.
        byte[] original = File.ReadAllBytes(Fixture("dbbench-3-families.ini"));
        var rng = new Random(17);
        for (int i = 0; i < 400; i++)
        {
            byte[] damaged = i % 2 == 0 ? original.AsSpan(0, rng.Next(original.Length)).ToArray() : (byte[])original.Clone();
            if (i % 2 == 1)
            {
                for (int flips = rng.Next(1, 4); flips > 0; flips--)
                {
                    const string Specials = "=[]\"#{};: x0\n";
                    damaged[rng.Next(damaged.Length)] = (byte)Specials[rng.Next(Specials.Length)];
                }
            }
            try
            {
                OptionsFileParser.Parse(System.Text.Encoding.UTF8.GetString(damaged), "damaged").ToKvOptions();
            }
            catch (KvException)
            {
                // expected for most inputs
            }
        }
    }
}
