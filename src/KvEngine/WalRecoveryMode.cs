namespace KvEngine;

/// <summary>
/// How recovery treats a damaged write-ahead log (RocksDB's WALRecoveryMode, same values).
/// </summary>
public enum WalRecoveryMode
{
    /// <summary>Tolerate an incomplete record at the end of a log; fail on any other damage.</summary>
    TolerateCorruptedTailRecords = 0,

    /// <summary>Fail on any damage, even an incomplete last record.</summary>
    AbsoluteConsistency = 1,

    /// <summary>Recover up to the first damaged record and discard what follows (the default).</summary>
    PointInTimeRecovery = 2,

    /// <summary>Skip damaged records and recover everything else.</summary>
    SkipAnyCorruptedRecords = 3,
}
