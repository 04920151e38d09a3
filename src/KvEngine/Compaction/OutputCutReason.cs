namespace KvEngine.Compaction;

/// <summary>
/// Why <see cref="CompactionOutputCutter"/> finished an output file before a key (the rules of
/// RocksDB's CompactionOutputs::ShouldStopBefore, in the order it checks them). Counted per output
/// level in the statistics; not persisted.
/// </summary>
internal enum OutputCutReason
{
    /// <summary>The output reached its maximum size.</summary>
    MaxFileSize = 0,

    /// <summary>Output size plus overlapped grandparent bytes would pass MaxCompactionBytes.</summary>
    MaxCompactionBytes = 1,

    /// <summary>The key would skip over a whole grandparent file worth more than target / 8.</summary>
    SkippedGrandparent = 2,

    /// <summary>At a grandparent boundary, the output is past 50-90% of the target (PR 10655's pre-cut).</summary>
    PreCut = 3,
}
