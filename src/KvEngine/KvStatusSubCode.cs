namespace KvEngine;

/// <summary>
/// Refines a <see cref="KvStatusCode"/>: RocksDB's <c>Status::SubCode</c>, with RocksDB's numeric
/// values (for example <see cref="NoSpace"/> under <see cref="KvStatusCode.IOError"/>, or
/// <see cref="LockTimeout"/> under <see cref="KvStatusCode.TimedOut"/>).
/// </summary>
public enum KvStatusSubCode
{
    /// <summary>No further detail.</summary>
    None = 0,

    /// <summary>A mutex wait timed out.</summary>
    MutexTimeout = 1,

    /// <summary>A lock wait timed out.</summary>
    LockTimeout = 2,

    /// <summary>Too many locks are held.</summary>
    LockLimit = 3,

    /// <summary>The device is out of space (ENOSPC, EDQUOT); retryable once space is back.</summary>
    NoSpace = 4,

    /// <summary>Lock waits form a cycle.</summary>
    Deadlock = 5,

    /// <summary>A file the operation relies on has been replaced or deleted.</summary>
    StaleFile = 6,

    /// <summary>A memory limit was reached.</summary>
    MemoryLimit = 7,

    /// <summary>A configured space limit was reached.</summary>
    SpaceLimit = 8,

    /// <summary>A path does not exist.</summary>
    PathNotFound = 9,

    /// <summary>A merge's operand buffer was too small.</summary>
    MergeOperandsInsufficientCapacity = 10,

    /// <summary>A manual compaction was paused.</summary>
    ManualCompactionPaused = 11,

    /// <summary>The entry was overwritten.</summary>
    Overwritten = 12,

    /// <summary>A transaction was not prepared.</summary>
    TxnNotPrepared = 13,

    /// <summary>I/O was fenced off (another writer took over the files).</summary>
    IOFenced = 14,

    /// <summary>The merge operator failed (under <see cref="KvStatusCode.Corruption"/>, as in RocksDB).</summary>
    MergeOperatorFailed = 15,

    /// <summary>A merge had more operands than its threshold.</summary>
    MergeOperandThresholdExceeded = 16,

    /// <summary>A prefetch limit was reached.</summary>
    PrefetchLimitReached = 17,

    /// <summary>A code path that should not be reached was.</summary>
    NotExpectedCodePath = 18,

    /// <summary>A compaction was aborted.</summary>
    CompactionAborted = 19,
}
