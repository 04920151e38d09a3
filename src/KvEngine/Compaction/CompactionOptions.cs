using KvEngine.Versions;

namespace KvEngine.Compaction;

/// <summary>
/// The tuning values of compaction, copied from <see cref="KvOptions"/> at open (RocksDB's
/// names). Immutable record; the defaults are RocksDB 7.8's.
/// </summary>
internal sealed record CompactionOptions
{
    public int NumLevels { get; init; } = Versions.Version.NumLevels;

    public int Level0FileNumCompactionTrigger { get; init; } = 4;

    public int Level0SlowdownWritesTrigger { get; init; } = 20;

    public int Level0StopWritesTrigger { get; init; } = 36;

    public long MaxBytesForLevelBase { get; init; } = 256L << 20;

    public double MaxBytesForLevelMultiplier { get; init; } = 10;

    public bool LevelCompactionDynamicLevelBytes { get; init; }

    public long TargetFileSizeBase { get; init; } = 64L << 20;

    public int TargetFileSizeMultiplier { get; init; } = 1;

    /// <summary>Upper bound of one compaction's input bytes (RocksDB: 25 x target_file_size_base).</summary>
    public long MaxCompactionBytes { get; init; } = 25 * (64L << 20);

    /// <summary>Align outputs to grandparent boundaries, 0.5x..2x target (PR 10655).</summary>
    public bool LevelCompactionDynamicFileSize { get; init; } = true;

    public bool DisableAutoCompactions { get; init; }

    /// <summary>
    /// A compaction filter is set: manual compactions never trivially move a file (RocksDB's
    /// Compaction::IsTrivialMove), so the filter sees every value of the range.
    /// </summary>
    public bool HasCompactionFilter { get; init; }

    /// <summary>
    /// KvOptions.BottommostCompression is set and differs from KvOptions.Compression: a file may
    /// then not be trivially moved into or out of the bottommost level (RocksDB's
    /// Compaction::InputCompressionMatchesOutput), so that it is rewritten in the bottommost codec.
    /// </summary>
    public bool BottommostCompressionDiffers { get; init; }

    public CompactionStyle Style { get; init; } = CompactionStyle.Level;

    public CompactionPri Pri { get; init; } = CompactionPri.MinOverlappingRatio;

    /// <summary>FIFO: total table bytes above which the oldest files are deleted.</summary>
    public long FifoMaxTableFilesSize { get; init; } = 1L << 30;

    /// <summary>FIFO: merge runs of small new level-0 files.</summary>
    public bool FifoAllowCompaction { get; init; }

    /// <summary>Compaction bytes a level-0 miss is charged as (0: no read-triggered compaction); see ColumnFamilyOptions.</summary>
    public long ReadTriggeredCompactionBytesPerMiss { get; init; }

    /// <summary>Memtable size; bounds the files FIFO's intra-level-0 compaction merges (x 1.1).</summary>
    public long WriteBufferSize { get; init; } = 64L << 20;

    /// <summary>
    /// Seconds after which leveled compaction pushes a file down, or FIFO deletes it, by the age of
    /// its oldest data; 0 = off. Resolved from <see cref="ColumnFamilyOptions.Ttl"/> as RocksDB
    /// 7.8's SanitizeOptions does (<see cref="ResolveTimes"/>).
    /// </summary>
    public ulong Ttl { get; init; }

    /// <summary>Seconds after which a file is rewritten, by its creation time; 0 = off (resolved as <see cref="Ttl"/>).</summary>
    public ulong PeriodicCompactionSeconds { get; init; }

    /// <summary>Universal compaction's settings (a private copy: never changed after open).</summary>
    public CompactionOptionsUniversal Universal { get; init; } = new();

    private const ulong ThirtyDays = 30 * 24 * 60 * 60;

    /// <summary>
    /// RocksDB 7.8's SanitizeOptions for ttl and periodic_compaction_seconds (null = its
    /// kDefaultTtl / kDefaultPeriodicCompSecs, "choose for me"): ttl defaults to 30 days except
    /// under FIFO (0); periodic compaction defaults to 30 days with a compaction filter (not FIFO),
    /// else 0; FIFO without a ttl takes the periodic value (30 days when unset) as its ttl, and with
    /// both set the smaller; universal runs a ttl as periodic compaction (the smaller of both).
    /// </summary>
    public static (ulong Ttl, ulong Periodic) ResolveTimes(CompactionStyle style, long? ttlOption, long? periodicOption,
        bool hasCompactionFilter)
    {
        ulong ttl = ttlOption is { } t ? (ulong)t : style != CompactionStyle.Fifo ? ThirtyDays : 0;
        ulong? periodic = periodicOption is { } p ? (ulong)p : null;
        if (style != CompactionStyle.Fifo)
        {
            if (hasCompactionFilter && periodic == null)
            {
                periodic = ThirtyDays;
            }
        }
        else if (ttl == 0)
        {
            periodic ??= ThirtyDays;
            ttl = periodic.Value;
        }
        else if (periodic is { } pv && pv != 0)
        {
            ttl = Math.Min(ttl, pv);
        }
        if (style == CompactionStyle.Universal && ttl != 0)
        {
            periodic = periodic is { } pv && pv != 0 ? Math.Min(ttl, pv) : ttl;
        }
        return (ttl, periodic ?? 0);
    }

    public static CompactionOptions From(ColumnFamilyOptions o)
    {
        (ulong ttl, ulong periodic) = ResolveTimes(o.CompactionStyle, o.Ttl, o.PeriodicCompactionSeconds, o.CompactionFilter != null);
        return Copy(o) with { Ttl = ttl, PeriodicCompactionSeconds = periodic };
    }

    private static CompactionOptions Copy(ColumnFamilyOptions o) => new()
    {
        Level0FileNumCompactionTrigger = o.Level0FileNumCompactionTrigger,
        BottommostCompressionDiffers = o.BottommostCompression is { } bottommost && bottommost != o.Compression,
        // FIFO deletes level-0 files itself when they are too many bytes: RocksDB's SanitizeOptions
        // turns the level-0 write stalls off for it, and so do we.
        Level0SlowdownWritesTrigger = o.CompactionStyle == CompactionStyle.Fifo ? int.MaxValue : o.Level0SlowdownWritesTrigger,
        Level0StopWritesTrigger = o.CompactionStyle == CompactionStyle.Fifo ? int.MaxValue : o.Level0StopWritesTrigger,
        MaxBytesForLevelBase = o.MaxBytesForLevelBase,
        MaxBytesForLevelMultiplier = o.MaxBytesForLevelMultiplier,
        // RocksDB's SanitizeOptions: dynamic level sizes only make sense for leveled compaction.
        LevelCompactionDynamicLevelBytes = o.LevelCompactionDynamicLevelBytes && o.CompactionStyle == CompactionStyle.Level,
        TargetFileSizeBase = o.TargetFileSizeBase,
        TargetFileSizeMultiplier = o.TargetFileSizeMultiplier,
        MaxCompactionBytes = o.MaxCompactionBytes > 0 ? o.MaxCompactionBytes : 25 * o.TargetFileSizeBase,
        LevelCompactionDynamicFileSize = o.LevelCompactionDynamicFileSize,
        DisableAutoCompactions = o.DisableAutoCompactions,
        ReadTriggeredCompactionBytesPerMiss = o.ReadTriggeredCompactionBytesPerMiss,
        HasCompactionFilter = o.CompactionFilter != null,
        Style = o.CompactionStyle,
        Pri = o.CompactionPri,
        FifoMaxTableFilesSize = o.FifoMaxTableFilesSize,
        FifoAllowCompaction = o.FifoAllowCompaction,
        Universal = (o.CompactionOptionsUniversal ?? new CompactionOptionsUniversal()).Clone(),
        WriteBufferSize = o.WriteBufferSize,
    };

    /// <summary>Target output file size for <paramref name="level"/> (levels 0 and 1 use the base).</summary>
    public long TargetFileSize(int level)
    {
        long size = TargetFileSizeBase;
        for (int i = 2; i <= level; i++)
        {
            size = size > long.MaxValue / TargetFileSizeMultiplier ? long.MaxValue : size * TargetFileSizeMultiplier;
        }
        return size;
    }
}
