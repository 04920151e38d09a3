namespace KvEngine;

/// <summary>
/// How the tree is compacted (RocksDB's CompactionStyle, with its numbers; universal, 1, is not
/// built). Persisted in RocksDB's OPTIONS files and db_bench flags by number: never renumber.
/// </summary>
public enum CompactionStyle
{
    /// <summary>Leveled compaction (kCompactionStyleLevel).</summary>
    Level = 0,

    /// <summary>
    /// Every file stays in level 0; the oldest files are deleted once the total exceeds
    /// FifoMaxTableFilesSize (kCompactionStyleFIFO).
    /// </summary>
    Fifo = 2,
}
