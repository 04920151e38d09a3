namespace KvEngine;

/// <summary>
/// How write-ahead-log replay treats damaged records when a database opens. The values are
/// RocksDB's <c>WALRecoveryMode</c> (include/rocksdb/options.h) and are stored in RocksDB's OPTIONS
/// files: never renumber. See docs/formats/log.md for the exact per-case behaviour.
/// </summary>
public enum WalRecoveryMode
{
    /// <summary>
    /// An incomplete record at the end of the log (a write cut short by a crash) is ignored; any
    /// other damage (checksum mismatch, bad length, broken fragment chain) fails the open.
    /// </summary>
    TolerateCorruptedTailRecords = 0,

    /// <summary>Any damage, including an incomplete last record, fails the open.</summary>
    AbsoluteConsistency = 1,

    /// <summary>
    /// Replay stops at the first damaged or incomplete record and the database opens with
    /// everything before it: a consistent point in time. The default.
    /// </summary>
    PointInTimeRecovery = 2,

    /// <summary>
    /// Damaged records are skipped and replay continues after them (salvage mode: the result may
    /// miss writes from the middle of the log).
    /// </summary>
    SkipAnyCorruptedRecords = 3,
}
