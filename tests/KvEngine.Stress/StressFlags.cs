using System.Globalization;

namespace KvEngine.Stress;

/// <summary>
/// kvstress's command line: RocksDB db_stress's flags with the same spelling (<c>-name=value</c>,
/// <c>--name=value</c>, or a bare <c>-name</c> for a boolean true). Invariant after
/// <see cref="Parse"/>: the operation percentages sum to 100 and every count is in range.
/// Immutable after parsing; shared read-only by all worker threads.
/// </summary>
internal sealed class StressFlags
{
    public string Db { get; private set; } = "";
    public string ExpectedValuesDir { get; private set; } = "";
    public long MaxKey { get; private set; } = 10_000;
    public long OpsPerThread { get; private set; } = 20_000;
    public int Threads { get; private set; } = 4;
    public int Reopen { get; private set; } = 2;
    public int ReadPercent { get; private set; } = 30;
    public int PrefixPercent { get; private set; } = 10;
    public int WritePercent { get; private set; } = 35;
    public int DelPercent { get; private set; } = 10;
    public int DelRangePercent { get; private set; } = 5;
    public int IterPercent { get; private set; } = 10;
    public int ValueSizeMult { get; private set; } = 8;
    public long WriteBufferSize { get; private set; } = 256 << 10;
    /// <summary>-bloom_bits (db_stress's, whole numbers here): whole-key filter bits per key; 0 writes none (a level-0 miss then reads a block, charged toward a read-triggered compaction when the block cache misses).</summary>
    public int BloomBits { get; private set; } = 10;
    public bool Sync { get; private set; }
    public int SyncOneIn { get; private set; }
    public long Seed { get; private set; } = 2026;
    public bool DestroyDbInitially { get; private set; }
    public bool VerifyOnly { get; private set; }
    public int VerifyDbOneIn { get; private set; } = 5_000;
    /// <summary>-checkpoint_one_in (db_stress's): a checkpoint, opened read-only and checked on the worker's stripe.</summary>
    public int CheckpointOneIn { get; private set; }
    public KvCompressionType CompressionType { get; private set; } = KvCompressionType.Snappy;
    public int FlushOneIn { get; private set; } = 2_000;
    public int CompactRangeOneIn { get; private set; } = 5_000;
    public int AcquireSnapshotOneIn { get; private set; } = 100;
    public int WriteBatchOneIn { get; private set; } = 4;
    public int RangeDeletionWidth { get; private set; } = 10;
    public int PowerLossCycles { get; private set; }
    /// <summary>-column_families: key i lives in family i % N (see <see cref="StressFamilies"/>).</summary>
    public int ColumnFamilies { get; private set; } = 1;
    /// <summary>-use_merge (db_stress's): every Put, alone or in a batch, is a Merge under <see cref="PutMergeOperator"/>.</summary>
    public bool UseMerge { get; private set; }
    /// <summary>
    /// -durability_journal (on disk): keep the durability model in DURABILITY_JOURNAL beside
    /// EXPECTED_STATE (<see cref="DurabilityJournal"/>), and verify at open as after a power cut:
    /// unsynced writes may be missing, nothing durable may be (kvcrashtest --power-cut).
    /// </summary>
    public bool DurabilityJournal { get; private set; }
    /// <summary>-mmap_wal: <see cref="KvOptions.MemoryMappedWal"/> (default 1, the engine's default).</summary>
    public bool MemoryMappedWal { get; private set; } = true;
    /// <summary>-use_direct_reads (db_stress's): <see cref="KvOptions.UseDirectReads"/>.</summary>
    public bool UseDirectReads { get; private set; }
    /// <summary>-use_direct_io_for_flush_and_compaction (db_stress's): <see cref="KvOptions.UseDirectIoForFlushAndCompaction"/>.</summary>
    public bool UseDirectIoForFlushAndCompaction { get; private set; }

    /// <summary>-compaction_style (db_stress's numbers: 0 leveled, 1 universal, 2 FIFO is refused: it deletes data).</summary>
    public CompactionStyle CompactionStyle { get; private set; } = CompactionStyle.Level;
    public bool FaultInjection { get; private set; }
    public int ReadFaultOneIn { get; private set; }
    public int WriteFaultOneIn { get; private set; }
    public int ProgressMs { get; private set; }

    /// <summary>True for the in-process modes that run on FaultInjectionFileSystem.</summary>
    public bool InProcessFileSystem => PowerLossCycles > 0 || FaultInjection;

    /// <summary>Parses <paramref name="args"/>; throws <see cref="ArgumentException"/> naming the bad flag.</summary>
    public static StressFlags Parse(IReadOnlyList<string> args)
    {
        var f = new StressFlags();
        for (int i = 0; i < args.Count; i++)
        {
            string a = args[i];
            if (!a.StartsWith('-'))
            {
                throw new ArgumentException($"unexpected argument '{a}' (flags look like -name=value)");
            }
            string body = a.TrimStart('-');
            int eq = body.IndexOf('=', StringComparison.Ordinal);
            string name = eq < 0 ? body : body[..eq];
            string? value = eq < 0 ? null : body[(eq + 1)..];
            f.Set(name, value);
        }
        f.Validate();
        return f;
    }

    private void Set(string name, string? v)
    {
        switch (name)
        {
            case "db": Db = Str(name, v); break;
            case "expected_values_dir": ExpectedValuesDir = Str(name, v); break;
            case "max_key": MaxKey = Long(name, v, 1, 1L << 30); break;
            case "ops_per_thread": OpsPerThread = Long(name, v, 0, long.MaxValue); break;
            case "threads": Threads = Int(name, v, 1, 256); break;
            case "reopen": Reopen = Int(name, v, 0, 1_000_000); break;
            case "readpercent": ReadPercent = Int(name, v, 0, 100); break;
            case "prefixpercent": PrefixPercent = Int(name, v, 0, 100); break;
            case "writepercent": WritePercent = Int(name, v, 0, 100); break;
            case "delpercent": DelPercent = Int(name, v, 0, 100); break;
            case "delrangepercent": DelRangePercent = Int(name, v, 0, 100); break;
            case "iterpercent": IterPercent = Int(name, v, 0, 100); break;
            case "value_size_mult": ValueSizeMult = Int(name, v, 1, 100_000); break;
            case "write_buffer_size": WriteBufferSize = Long(name, v, 4096, 1L << 34); break;
            case "bloom_bits": BloomBits = Int(name, v, 0, 64); break;
            case "sync": Sync = Bool(name, v); break;
            case "sync_one_in": SyncOneIn = Int(name, v, 0, int.MaxValue); break;
            case "seed": Seed = Long(name, v, 0, long.MaxValue); break;
            case "destroy_db_initially": DestroyDbInitially = Bool(name, v); break;
            case "verify_only": VerifyOnly = Bool(name, v); break;
            case "verify_db_one_in": VerifyDbOneIn = Int(name, v, 0, int.MaxValue); break;
            case "checkpoint_one_in": CheckpointOneIn = Int(name, v, 0, int.MaxValue); break;
            case "compression_type": CompressionType = Compression(v); break;
            case "flush_one_in": FlushOneIn = Int(name, v, 0, int.MaxValue); break;
            case "compact_range_one_in": CompactRangeOneIn = Int(name, v, 0, int.MaxValue); break;
            case "acquire_snapshot_one_in": AcquireSnapshotOneIn = Int(name, v, 0, int.MaxValue); break;
            case "write_batch_one_in": WriteBatchOneIn = Int(name, v, 0, int.MaxValue); break;
            case "range_deletion_width": RangeDeletionWidth = Int(name, v, 1, 1_000_000); break;
            case "power_loss_cycles": PowerLossCycles = Int(name, v, 0, int.MaxValue); break;
            case "column_families": ColumnFamilies = Int(name, v, 1, 64); break;
            case "use_merge": UseMerge = Bool(name, v); break;
            case "durability_journal": DurabilityJournal = Bool(name, v); break;
            case "mmap_wal": MemoryMappedWal = Bool(name, v); break;
            case "use_direct_reads": UseDirectReads = Bool(name, v); break;
            case "use_direct_io_for_flush_and_compaction": UseDirectIoForFlushAndCompaction = Bool(name, v); break;
            case "compaction_style": CompactionStyle = Int(name, v, 0, 1) == 1 ? CompactionStyle.Universal : CompactionStyle.Level; break;
            case "fault_injection":
            case "faults": FaultInjection = Bool(name, v); break;
            case "read_fault_one_in": ReadFaultOneIn = Int(name, v, 0, int.MaxValue); break;
            case "write_fault_one_in": WriteFaultOneIn = Int(name, v, 0, int.MaxValue); break;
            case "progress_ms": ProgressMs = Int(name, v, 0, int.MaxValue); break;
            default: throw new ArgumentException($"unknown flag -{name}");
        }
    }

    private void Validate()
    {
        int sum = ReadPercent + PrefixPercent + WritePercent + DelPercent + DelRangePercent + IterPercent;
        if (sum != 100)
        {
            throw new ArgumentException($"-readpercent + -prefixpercent + -writepercent + -delpercent + -delrangepercent + -iterpercent must be 100 (is {sum})");
        }
        if (!InProcessFileSystem && Db.Length == 0)
        {
            throw new ArgumentException("-db is required (except with -power_loss_cycles or -fault_injection, which run in memory)");
        }
        if (DurabilityJournal && (InProcessFileSystem || ExpectedValuesDir.Length == 0))
        {
            throw new ArgumentException("-durability_journal needs the on-disk mode with -expected_values_dir");
        }
        if (MaxKey < Threads)
        {
            throw new ArgumentException($"-max_key ({MaxKey}) must be at least -threads ({Threads}): each thread owns a stripe of keys");
        }
        if (FaultInjection && ReadFaultOneIn == 0 && WriteFaultOneIn == 0)
        {
            ReadFaultOneIn = 2_000;
            WriteFaultOneIn = 500;
        }
        if (FaultInjection && PowerLossCycles == 0)
        {
            PowerLossCycles = 10;
        }
    }

    private static string Str(string name, string? v) =>
        string.IsNullOrEmpty(v) ? throw new ArgumentException($"-{name} needs a value") : v;

    private static long Long(string name, string? v, long min, long max)
    {
        if (!long.TryParse(Str(name, v), NumberStyles.Integer, CultureInfo.InvariantCulture, out long x) || x < min || x > max)
        {
            throw new ArgumentException($"-{name}={v}: expected an integer in [{min}, {max}]");
        }
        return x;
    }

    private static int Int(string name, string? v, int min, int max) => (int)Long(name, v, min, max);

    private static bool Bool(string name, string? v) => v switch
    {
        null or "1" or "true" => true,
        "0" or "false" => false,
        _ => throw new ArgumentException($"-{name}={v}: expected 0, 1, true or false"),
    };

    private static KvCompressionType Compression(string? v) => v switch
    {
        "none" => KvCompressionType.None,
        "snappy" => KvCompressionType.Snappy,
        "lz4" => KvCompressionType.Lz4,
        "lz4hc" => KvCompressionType.Lz4HC,
        "zstd" => KvCompressionType.Zstd,
        _ => throw new ArgumentException($"-compression_type={v}: expected none, snappy, lz4, lz4hc or zstd"),
    };
}
