using System.Diagnostics;

namespace KvEngine.RateLimiting;

/// <summary>
/// The time source of a <see cref="KvRateLimiter"/>: a monotonic clock in microseconds and a wait
/// on the limiter's monitor for at most a span of it. The default reads <see cref="Stopwatch"/>
/// and waits with <see cref="Monitor.Wait(object, TimeSpan)"/>; tests substitute a clock whose
/// wait advances simulated time, so the limiter's schedule is checked without real waiting.
/// Thread-safe.
/// </summary>
internal class RateLimiterClock
{
    public static readonly RateLimiterClock Default = new();

    private static readonly double s_microsPerTick = 1_000_000.0 / Stopwatch.Frequency;

    public virtual long NowMicros() => (long)(Stopwatch.GetTimestamp() * s_microsPerTick);

    /// <summary>
    /// Waits on <paramref name="monitor"/> (held by the caller) until pulsed or
    /// <paramref name="micros"/> pass (rounded up to whole milliseconds).
    /// </summary>
    public virtual void Wait(object monitor, long micros)
    {
        long ms = Math.Min(int.MaxValue, (micros + 999) / 1000);
        Monitor.Wait(monitor, (int)ms);
    }
}
