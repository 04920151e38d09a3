namespace KvEngine.Tests.Compaction;

/// <summary>A clock that moves only when told (<see cref="Advance"/>). Thread-safe.</summary>
internal sealed class ManualClock(DateTimeOffset start) : TimeProvider
{
    private long _ticks = start.UtcTicks;

    public ManualClock() : this(new DateTimeOffset(2030, 1, 1, 0, 0, 0, TimeSpan.Zero))
    {
    }

    public ulong NowSeconds => (ulong)GetUtcNow().ToUnixTimeSeconds();

    public override DateTimeOffset GetUtcNow() => new(Interlocked.Read(ref _ticks), TimeSpan.Zero);

    public void Advance(TimeSpan by) => Interlocked.Add(ref _ticks, by.Ticks);
}
