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

    public static CompactionOptions From(ColumnFamilyOptions o) => new()
    {
        Level0FileNumCompactionTrigger = o.Level0FileNumCompactionTrigger,
        BottommostCompressionDiffers = o.BottommostCompression is { } bottommost && bottommost != o.Compression,
        // FIFO deletes level-0 files itself when they are too many bytes: RocksDB's SanitizeOptions
        // turns the level-0 write stalls off for it, and so do we.
        Level0SlowdownWritesTrigger = o.CompactionStyle == CompactionStyle.Fifo ? int.MaxValue : o.Level0SlowdownWritesTrigger,
        Level0StopWritesTrigger = o.CompactionStyle == CompactionStyle.Fifo ? int.MaxValue : o.Level0StopWritesTrigger,
        MaxBytesForLevelBase = o.MaxBytesForLevelBase,
        MaxBytesForLevelMultiplier = o.MaxBytesForLevelMultiplier,
        LevelCompactionDynamicLevelBytes = o.LevelCompactionDynamicLevelBytes,
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
