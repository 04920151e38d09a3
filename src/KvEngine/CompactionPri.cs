namespace KvEngine;

/// <summary>
/// Which file of a level above 0 a leveled compaction picks (RocksDB's CompactionPri, with its
/// numbers; 0..2 are not built). Named by number in db_bench flags: never renumber.
/// </summary>
public enum CompactionPri
{
    /// <summary>
    /// The file whose overlapping bytes in the next level, per byte of its own size, are fewest
    /// (kMinOverlappingRatio, RocksDB 7.8's default).
    /// </summary>
    MinOverlappingRatio = 3,

    /// <summary>
    /// The file after the level's compact cursor, wrapping around (kRoundRobin); the cursors are
    /// kept in the MANIFEST.
    /// </summary>
    RoundRobin = 4,
}
