namespace KvEngine;

/// <summary>
/// How universal compaction's size-ratio pick decides a run may join the runs picked so far
/// (RocksDB's CompactionStopStyle, with its numbers and OPTIONS-file names).
/// </summary>
public enum CompactionStopStyle
{
    /// <summary>
    /// The next run joins when neither it nor the last picked run is more than size_ratio percent
    /// larger than the other (kCompactionStopStyleSimilarSize).
    /// </summary>
    SimilarSize = 0,

    /// <summary>
    /// The next run joins when it is at most the total of the runs picked so far, plus size_ratio
    /// percent (kCompactionStopStyleTotalSize, the default).
    /// </summary>
    TotalSize = 1,
}
