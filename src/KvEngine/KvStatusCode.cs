namespace KvEngine;

/// <summary>
/// What kind of failure a <see cref="KvException"/> reports: RocksDB's <c>Status::Code</c>, with
/// RocksDB's numeric values, so code ported from RocksDB (or talking to it) can branch on the same
/// codes. <see cref="Ok"/> never appears on an exception.
/// </summary>
public enum KvStatusCode
{
    /// <summary>Success (RocksDB's kOk); never the code of an exception.</summary>
    Ok = 0,

    /// <summary>Something looked up does not exist (a file, a column family, a key where absence is an error).</summary>
    NotFound = 1,

    /// <summary>Data on disk is not what was written, or a merge operator failed (as RocksDB reports it).</summary>
    Corruption = 2,

    /// <summary>The operation or a setting is not supported (by KvEngine, or by how the database was opened).</summary>
    NotSupported = 3,

    /// <summary>An argument or setting is invalid for the database as it is.</summary>
    InvalidArgument = 4,

    /// <summary>The file system failed: a read, a write, a missing directory, a full disk, a held LOCK.</summary>
    IOError = 5,

    /// <summary>A merge needs more operands (RocksDB's kMergeInProgress).</summary>
    MergeInProgress = 6,

    /// <summary>The operation could not complete without blocking or more input.</summary>
    Incomplete = 7,

    /// <summary>The database is closing.</summary>
    ShutdownInProgress = 8,

    /// <summary>A wait (for a lock, a mutex) ran out of time.</summary>
    TimedOut = 9,

    /// <summary>The operation was abandoned, by a caller's callback or after an earlier failure.</summary>
    Aborted = 10,

    /// <summary>A resource is in use by a conflicting operation; retrying later may succeed.</summary>
    Busy = 11,

    /// <summary>The entry or operation expired.</summary>
    Expired = 12,

    /// <summary>A transient failure: retry the operation.</summary>
    TryAgain = 13,

    /// <summary>A compaction would be larger than allowed.</summary>
    CompactionTooLarge = 14,

    /// <summary>The column family was dropped.</summary>
    ColumnFamilyDropped = 15,
}
