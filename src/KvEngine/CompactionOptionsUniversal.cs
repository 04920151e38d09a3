namespace KvEngine;

/// <summary>
/// The settings of universal compaction (<see cref="CompactionStyle.Universal"/>; RocksDB's
/// CompactionOptionsUniversal, with its defaults, persisted in OPTIONS files as
/// compaction_options_universal={...}). The tree is a list of sorted runs, newest first: each
/// level-0 file, then each non-empty level. Once there are at least
/// <see cref="ColumnFamilyOptions.Level0FileNumCompactionTrigger"/> runs, in this order:
/// <list type="number">
/// <item>Size amplification: when the runs but the oldest total at least
/// <see cref="MaxSizeAmplificationPercent"/> percent of the oldest, all runs are merged.</item>
/// <item>Size ratio: from the newest run, the first series of at least <see cref="MinMergeWidth"/>
/// and at most <see cref="MaxMergeWidth"/> consecutive runs where each next run is at most
/// <see cref="SizeRatio"/> percent larger than the runs before it (<see cref="StopStyle"/>) is
/// merged.</item>
/// <item>Run count: otherwise enough of the newest runs to bring the count below the trigger.</item>
/// </list>
/// Mutable settings object, copied at open.
/// </summary>
public sealed class CompactionOptionsUniversal
{
    /// <summary>Percent by which a run may be larger than what it joins (RocksDB: size_ratio, 1).</summary>
    public int SizeRatio { get; set; } = 1;

    /// <summary>Fewest runs a size-ratio compaction merges (RocksDB: min_merge_width, 2).</summary>
    public int MinMergeWidth { get; set; } = 2;

    /// <summary>Most runs a size-ratio or run-count compaction merges (RocksDB: max_merge_width; int.MaxValue: no limit).</summary>
    public int MaxMergeWidth { get; set; } = int.MaxValue;

    /// <summary>
    /// Extra space allowed, in percent of the oldest run, before everything is merged (RocksDB:
    /// max_size_amplification_percent, 200).
    /// </summary>
    public int MaxSizeAmplificationPercent { get; set; } = 200;

    /// <summary>
    /// -1 (the default): outputs are compressed as <see cref="ColumnFamilyOptions.Compression"/>
    /// says. Otherwise a size-ratio compaction writes uncompressed output while the runs older than
    /// its inputs hold less than this percent of all the data, so only the oldest data is
    /// compressed (RocksDB: compression_size_percent).
    /// </summary>
    public int CompressionSizePercent { get; set; } = -1;

    /// <summary>How a size-ratio pick decides a run joins (RocksDB: stop_style, total size).</summary>
    public CompactionStopStyle StopStyle { get; set; } = CompactionStopStyle.TotalSize;

    /// <summary>
    /// A compaction whose input files do not overlap moves them to the output level instead of
    /// rewriting them (RocksDB: allow_trivial_move, false). Periodic compactions always rewrite.
    /// </summary>
    public bool AllowTrivialMove { get; set; }

    internal CompactionOptionsUniversal Clone() => (CompactionOptionsUniversal)MemberwiseClone();

    internal void Validate()
    {
        ArgumentOutOfRangeException.ThrowIfNegative(SizeRatio, nameof(SizeRatio));
        ArgumentOutOfRangeException.ThrowIfLessThan(MinMergeWidth, 2, nameof(MinMergeWidth));
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxMergeWidth, MinMergeWidth, nameof(MaxMergeWidth));
        ArgumentOutOfRangeException.ThrowIfNegative(MaxSizeAmplificationPercent, nameof(MaxSizeAmplificationPercent));
        ArgumentOutOfRangeException.ThrowIfLessThan(CompressionSizePercent, -1, nameof(CompressionSizePercent));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(CompressionSizePercent, 100, nameof(CompressionSizePercent));
        if (!Enum.IsDefined(StopStyle))
        {
            throw new ArgumentException($"Unknown stop style {(int)StopStyle}.", nameof(StopStyle));
        }
    }
}
