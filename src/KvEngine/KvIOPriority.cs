namespace KvEngine;

/// <summary>
/// The priority a request to a <see cref="KvRateLimiter"/> is charged at (RocksDB's
/// Env::IOPriority, same numbers). KvEngine charges flush output at <see cref="High"/> and
/// compaction output at <see cref="Low"/>, as RocksDB does; <see cref="Mid"/> and
/// <see cref="User"/> are for callers that share the limiter with their own I/O
/// (<see cref="KvRateLimiter.Request(long, KvIOPriority, System.Threading.CancellationToken)"/>).
/// </summary>
public enum KvIOPriority
{
    /// <summary>Compactions (RocksDB: IO_LOW). Served last, except one refill in <see cref="KvRateLimiter.Fairness"/>.</summary>
    Low = 0,

    /// <summary>Between the two (RocksDB: IO_MID).</summary>
    Mid = 1,

    /// <summary>Flushes (RocksDB: IO_HIGH).</summary>
    High = 2,

    /// <summary>Served first at every refill (RocksDB: IO_USER).</summary>
    User = 3,
}
