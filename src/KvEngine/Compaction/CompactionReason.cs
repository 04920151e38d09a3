namespace KvEngine.Compaction;

/// <summary>Why a compaction ran (a subset of RocksDB's CompactionReason).</summary>
internal enum CompactionReason
{
    /// <summary>Level 0 reached its file-count (or size) trigger.</summary>
    Level0FilesNum,

    /// <summary>A level above 0 exceeded its target size.</summary>
    LevelMaxLevelSize,

    /// <summary>KvDb.CompactRange.</summary>
    ManualCompaction,

    /// <summary>FIFO: the table files exceed their size limit; the oldest are deleted.</summary>
    FifoMaxSize,

    /// <summary>FIFO with compaction allowed: small new level-0 files merged into one.</summary>
    FifoReduceNumFiles,

    /// <summary>Reads kept searching level-0 files that did not hold their keys (<see cref="Level0ReadCharges"/>).</summary>
    ReadTriggered,

    /// <summary>Leveled: a file's oldest data is older than the TTL; it goes down a level (RocksDB's kTtl).</summary>
    Ttl,

    /// <summary>A file was written longer ago than PeriodicCompactionSeconds; it is rewritten (kPeriodicCompaction).</summary>
    PeriodicCompaction,

    /// <summary>FIFO: the oldest files' data is older than the TTL; they are deleted (kFIFOTtl).</summary>
    FifoTtl,

    /// <summary>Universal: the newer runs are too large beside the oldest; every run merges (kUniversalSizeAmplification).</summary>
    UniversalSizeAmplification,

    /// <summary>Universal: a series of runs of similar size merges (kUniversalSizeRatio).</summary>
    UniversalSizeRatio,

    /// <summary>Universal: too many runs; the newest merge whatever their sizes (kUniversalSortedRunNum).</summary>
    UniversalSortedRunNum,
}
