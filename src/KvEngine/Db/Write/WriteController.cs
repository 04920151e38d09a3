using System.Diagnostics;

namespace KvEngine.Db.Write;

/// <summary>
/// The delayed-write rate limit (RocksDB's WriteController): while some column family is past a
/// slowdown trigger, writes are admitted at <see cref="KvOptions.DelayedWriteRate"/> bytes per
/// second. A write of n bytes consumes credit; credit refills every millisecond in proportion to
/// the time passed; a write that finds too little credit is told how long to wait so the long-run
/// rate holds (its bytes over budget / rate), at least one refill period.
/// <para>
/// Thread-safety: guarded by the database mutex (only write-group leaders, which hold it, call
/// <see cref="GetDelay"/>). Time comes from <see cref="Stopwatch"/> (monotonic).
/// </para>
/// </summary>
internal sealed class WriteController
{
    private const long MicrosPerRefill = 1000;

    private readonly long _bytesPerSecond;
    private long _credit;
    private long _nextRefillMicros;

    public WriteController(long bytesPerSecond)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(bytesPerSecond, 1);
        _bytesPerSecond = bytesPerSecond;
    }

    public long BytesPerSecond => _bytesPerSecond;

    /// <summary>
    /// How long a write of <paramref name="bytes"/> must wait, at <paramref name="nowMicros"/>
    /// (a monotonic clock in microseconds), for the delayed rate to hold; zero when credit covers it.
    /// </summary>
    public TimeSpan GetDelay(long bytes, long nowMicros)
    {
        if (_credit >= bytes)
        {
            _credit -= bytes;
            return TimeSpan.Zero;
        }
        if (_nextRefillMicros == 0)
        {
            _nextRefillMicros = nowMicros;
        }
        if (_nextRefillMicros <= nowMicros)
        {
            long elapsed = nowMicros - _nextRefillMicros + MicrosPerRefill;
            _credit += (long)Math.Ceiling(elapsed / 1_000_000.0 * _bytesPerSecond);
            _nextRefillMicros = nowMicros + MicrosPerRefill;
            if (_credit >= bytes)
            {
                _credit -= bytes;
                return TimeSpan.Zero;
            }
        }
        long overBudget = bytes - _credit;
        long neededMicros = (long)(overBudget * 1_000_000.0 / _bytesPerSecond);
        _credit = 0;
        _nextRefillMicros += neededMicros;
        return TimeSpan.FromMicroseconds(Math.Max(_nextRefillMicros - nowMicros, MicrosPerRefill));
    }

    /// <summary>The monotonic clock <see cref="GetDelay"/> expects, in microseconds.</summary>
    public static long NowMicros() => (long)(Stopwatch.GetTimestamp() * (1_000_000.0 / Stopwatch.Frequency));
}
