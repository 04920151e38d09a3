using System.Buffers;
using System.Text;
using KvEngine.Versions;

namespace KvEngine.DbBench.Engines;

/// <summary>
/// kvbench's KvEngine engine (<c>-engine=kvengine</c>, the default): every flag maps to the
/// <see cref="KvOptions"/> member of the same meaning; the block cache and statistics live across
/// the reopen before each fill benchmark. With -num_column_families the database opens with
/// "default" and column_family_name_000001... (db_bench's names, every family with the same
/// options), created when missing unless -use_existing_db. A mutable struct held in one field of the runner (see
/// <see cref="IBenchEngine{TIterator, TBatch}"/>); open/close on the main thread only.
/// </summary>
internal struct KvEngineBench : IBenchEngine<KvEngineBenchIterator, KvEngineBenchBatch>
{
    private readonly BenchFlags _f;
    private readonly KvStatistics? _stats;
    private readonly WriteOptions _write;
    private readonly WriteOptions _syncWrite;
    private readonly ReadOptions _read;
    private KvBlockCache? _blockCache;
    private KvDb? _db;
    private ColumnFamilyHandle[] _families = [];

    public KvEngineBench(BenchFlags flags)
    {
        _f = flags;
        _stats = flags.Statistics ? new KvStatistics() : null;
        _write = new WriteOptions { Sync = flags.Sync, DisableWal = flags.DisableWal };
        _syncWrite = new WriteOptions { Sync = true, DisableWal = flags.DisableWal };
        _read = new ReadOptions
        {
            VerifyChecksums = flags.VerifyChecksum, PrefixSameAsStart = flags.PrefixSameAsStart, TotalOrderSeek = flags.TotalOrderSeek, AsyncIO = flags.AsyncIO,
        };
    }

    public readonly string Description => "kvengine (KvEngine " + typeof(KvDb).Assembly.GetName().Version + ")";

    /// <summary>db_bench's ColumnFamilyName: "default" for 0, column_family_name_%06d otherwise.</summary>
    public static string FamilyName(int i) =>
        i == 0 ? "default" : "column_family_name_" + i.ToString("D6", System.Globalization.CultureInfo.InvariantCulture);

    public void Open()
    {
        KvOptions options = Options();
        if (_f.NumColumnFamilies <= 1)
        {
            _db = KvDb.Open(_f.Db, options);
            _families = [_db.DefaultColumnFamily];
            return;
        }
        options.CreateMissingColumnFamilies = !_f.UseExistingDb;
        var descriptors = new ColumnFamilyDescriptor[_f.NumColumnFamilies];
        for (int i = 0; i < descriptors.Length; i++)
        {
            descriptors[i] = new ColumnFamilyDescriptor(FamilyName(i), options);
        }
        KvDb db = _db = KvDb.Open(_f.Db, options, descriptors);
        _families = Array.ConvertAll(descriptors, d => db.GetColumnFamily(d.Name)!);
    }

    /// <summary>The options the flags describe (the block cache made once per engine).</summary>
    internal KvOptions Options() => new()
    {
        MergeOperator = MergeOperatorFor(_f.MergeOperator),
        BlockCache = _blockCache ??= new KvBlockCache(_f.CacheSize, _f.CacheNumShardBits,
            compressedSecondaryCacheSize: _f.UseCompressedSecondaryCache ? _f.CompressedSecondaryCacheSize : 0,
            compressedSecondaryCacheCompression: _f.CompressedSecondaryCacheCompressionType, compressedSecondaryCacheSplit: _f.CompressedSecondaryCacheSplit),
        CacheIndexAndFilterBlocks = _f.CacheIndexAndFilterBlocks,
        PinL0FilterAndIndexBlocksInCache = _f.PinL0FilterAndIndexBlocksInCache,
        IndexType = _f.IndexType,
        DataBlockIndexType = _f.DataBlockIndexType,
        DataBlockHashTableUtilRatio = _f.DataBlockHashTableUtilRatio,
        PartitionFilters = _f.PartitionFilters,
        MetadataBlockSize = _f.MetadataBlockSize,
        DecouplePartitionedFilters = _f.DecouplePartitionedFilters,
        PinTopLevelIndexAndFilter = _f.PinTopLevelIndexAndFilter,
        MetadataCacheOptions = new KvMetadataCacheOptions
        {
            TopLevelIndexPinning = _f.TopLevelIndexPinning,
            PartitionPinning = _f.PartitionPinning,
            UnpartitionedPinning = _f.UnpartitionedPinning,
        },
        MaxOpenFiles = _f.OpenFiles == 0 ? -1 : _f.OpenFiles,
        CreateIfMissing = true,
        WriteBufferSize = _f.WriteBufferSize,
        MaxWriteBufferNumber = _f.MaxWriteBufferNumber,
        MinWriteBufferNumberToMerge = _f.MinWriteBufferNumberToMerge,
        MemTableHashIndexRatio = _f.MemTableHashIndexRatio,
        MemTableHugePages = _f.MemTableHugePages,
        ReadTriggeredCompactionBytesPerMiss = _f.ReadTriggeredCompactionBytesPerMiss,
        Compression = _f.CompressionType,
        CompressionLevel = _f.CompressionLevel,
        Checksum = _f.ChecksumType,
        BloomBitsPerKey = _f.BloomBits < 0 ? 0 : _f.BloomBits,
        PrefixExtractor = _f.PrefixSize > 0 ? KvPrefixExtractor.FixedPrefix(_f.PrefixSize) : null, // db_bench: NewFixedPrefixTransform(prefix_size)
        WholeKeyFiltering = _f.WholeKeyFiltering,
        OptimizeFiltersForMemory = _f.OptimizeFiltersForMemory,
        BlockSize = _f.BlockSize,
        Statistics = _stats,
        TargetFileSizeBase = _f.TargetFileSizeBase,
        MaxBytesForLevelBase = _f.MaxBytesForLevelBase,
        MaxBytesForLevelMultiplier = _f.MaxBytesForLevelMultiplier,
        Level0FileNumCompactionTrigger = _f.Level0FileNumCompactionTrigger,
        Level0SlowdownWritesTrigger = _f.Level0SlowdownWritesTrigger,
        Level0StopWritesTrigger = _f.Level0StopWritesTrigger,
        MaxBackgroundJobs = _f.MaxBackgroundJobs,
        DisableAutoCompactions = _f.DisableAutoCompactions,
        // db_bench: NewGenericRateLimiter(rate, refill period, fairness 10, kWritesOnly).
        RateLimiter = _f.RateLimiterBytesPerSec > 0
            ? new KvRateLimiter(_f.RateLimiterBytesPerSec, TimeSpan.FromMicroseconds(_f.RateLimiterRefillPeriodUs))
            : null,
        AllowConcurrentMemtableWrite = _f.AllowConcurrentMemtableWrite,
        UseDirectReads = _f.UseDirectReads,
        UseDirectIoForFlushAndCompaction = _f.UseDirectIoForFlushAndCompaction,
        CompactionReadaheadSize = (int)Math.Min(_f.CompactionReadaheadSize, int.MaxValue),
        LevelCompactionDynamicFileSize = _f.LevelCompactionDynamicFileSize,
        LevelCompactionDynamicLevelBytes = _f.LevelCompactionDynamicLevelBytes,
        CompactionStyle = _f.CompactionStyle,
        CompactionPri = _f.CompactionPri,
        // db_bench's default 0 MB leaves RocksDB's 1 GiB.
        FifoMaxTableFilesSize = _f.FifoMaxTableFilesSizeMb > 0 ? _f.FifoMaxTableFilesSizeMb << 20 : 1L << 30,
        FifoAllowCompaction = _f.FifoAllowCompaction,
        CompactionOptionsUniversal = new CompactionOptionsUniversal
        {
            SizeRatio = _f.UniversalSizeRatio,
            MinMergeWidth = _f.UniversalMinMergeWidth,
            MaxMergeWidth = _f.UniversalMaxMergeWidth,
            MaxSizeAmplificationPercent = _f.UniversalMaxSizeAmplificationPercent,
            CompressionSizePercent = _f.UniversalCompressionSizePercent,
            AllowTrivialMove = _f.UniversalAllowTrivialMove,
        },
        Ttl = _f.Ttl,
        PeriodicCompactionSeconds = _f.PeriodicCompactionSeconds,
    };

    public void Close()
    {
        _db?.Dispose();
        _db = null;
        _families = [];
    }

    public readonly void Put(int family, ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, bool sync) =>
        _db!.Put(_families[family], key, value, sync ? _syncWrite : _write);

    public readonly void Delete(ReadOnlySpan<byte> key, bool sync) => _db!.Delete(key, sync ? _syncWrite : _write);

    public readonly void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> operand, bool sync) => _db!.Merge(key, operand, sync ? _syncWrite : _write);

    /// <summary>The operator db_bench's -merge_operator names (null for none).</summary>
    internal static KvMergeOperator? MergeOperatorFor(string name) => name switch
    {
        "uint64add" => UInt64AddOperator.Instance,
        "stringappend" => new StringAppendOperator(), // db_bench: delimiter ','
        _ => null,
    };

    public readonly KvEngineBenchBatch NewBatch() => new(new WriteBatch(), _families);

    public readonly void Write(KvEngineBenchBatch batch, bool sync) => _db!.Write(batch.Batch, sync ? _syncWrite : _write);

    public readonly bool TryGet(int family, ReadOnlySpan<byte> key, ArrayBufferWriter<byte> value) => _db!.TryGet(_families[family], key, value, _read);

    /// <summary>
    /// The batched MultiGet; with -async_io the asynchronous one (every block read of a round
    /// submitted at once to the block-read engine), waited for on this thread.
    /// </summary>
    public readonly void MultiGet(int family, ReadOnlyMemory<byte>[] keys, MultiGetResults results)
    {
        if (!_read.AsyncIO)
        {
            _db!.MultiGet(_families[family], keys, results, _read);
            return;
        }
        ValueTask pending = _db!.MultiGetAsync(_families[family], keys, results, _read);
        if (!pending.IsCompletedSuccessfully)
        {
            pending.AsTask().GetAwaiter().GetResult();
        }
    }

    public readonly ValueTask<bool> TryGetAsync(ReadOnlyMemory<byte> key, ArrayBufferWriter<byte> value) => _db!.TryGetAsync(key, value, _read);

    public readonly KvEngineBenchIterator NewIterator() => new(_db!.NewIterator(_read));

    public readonly void Flush() => _db!.Flush();

    public readonly void CompactAll() => _db!.CompactRange(null, null);

    public readonly string? GetProperty(string name) => _db!.GetProperty(name);

    /// <summary>Each level's live files, one " number:size" line each.</summary>
    public readonly string SsTables()
    {
        var sb = new StringBuilder();
        Versions.Version v = _db!.Impl.Versions.Current;
        for (int level = 0; level < Versions.Version.NumLevels; level++)
        {
            sb.Append("--- level ").Append(level).Append(" ---\n");
            foreach (Versions.FileMetaData f in v.Files(level))
            {
                sb.Append(' ').Append(f.Number).Append(':').Append(f.FileSize).Append('\n');
            }
        }
        return sb.ToString();
    }

    public readonly EngineMemory SampleMemory()
    {
        KvDb? db = _db;
        return db == null ? EngineMemory.Unknown : MemoryReport.KvEngineMemory(db.GetProperty);
    }

    public readonly void PrintReport(TextWriter output)
    {
        if (_blockCache != null)
        {
            CacheReport.Print(output, _blockCache);
        }
        if (_stats != null)
        {
            output.WriteLine("STATISTICS:");
            output.Write(_stats.ToString());
        }
    }

    public void Dispose()
    {
        Close();
        _blockCache?.Dispose();
        _blockCache = null;
    }
}
