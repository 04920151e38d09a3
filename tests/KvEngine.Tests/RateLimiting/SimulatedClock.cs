using KvEngine.RateLimiting;

namespace KvEngine.Tests.RateLimiting;

/// <summary>
/// A rate limiter clock in simulated time: a wait for the next refill returns at once with the
/// clock advanced by the span waited, so a limiter's schedule runs without real waiting and its
/// timing is exact. Thread-safe (the limiter calls it under its lock; tests read it from anywhere).
/// </summary>
internal sealed class SimulatedClock : RateLimiterClock
{
    private long _nowMicros = 1_000_000;

    public long Now => Interlocked.Read(ref _nowMicros);

    public override long NowMicros() => Interlocked.Read(ref _nowMicros);

    public override void Wait(object monitor, long micros) => Interlocked.Add(ref _nowMicros, micros);
}
