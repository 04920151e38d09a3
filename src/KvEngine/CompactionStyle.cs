namespace KvEngine;

/// <summary>
/// How the tree is compacted (RocksDB's CompactionStyle, with its numbers). Persisted in RocksDB's OPTIONS files and db_bench flags by number: never renumber.
/// </summary>
public enum CompactionStyle
{
    /// <summary>Leveled compaction (kCompactionStyleLevel).</summary>
    Level = 0,

    /// <summary>
    /// Universal compaction (kCompactionStyleUniversal): the tree is a list of sorted runs (each
    /// level-0 file, each non-empty level), newest first; runs of similar size are merged, and
    /// everything when the older runs are too small beside the newest ones (space amplification).
    /// Fewer rewrites than leveled, more space. Tuned by <see cref="ColumnFamilyOptions.CompactionOptionsUniversal"/>.
    /// </summary>
    Universal = 1,

    /// <summary>
    /// Every file stays in level 0; the oldest files are deleted once the total exceeds
    /// FifoMaxTableFilesSize (kCompactionStyleFIFO).
    /// </summary>
    Fifo = 2,
}
