namespace KvEngine.Stress;

/// <summary>
/// A snapshot a worker holds and what its stripe's keys [<see cref="Lower"/>, <see cref="Upper"/>)
/// looked like when it was taken; reads through it must see exactly that, whatever was written,
/// flushed or compacted since. Owned by one worker thread.
/// </summary>
internal sealed class SnapshotRecord(Snapshot snapshot, long lower, long upper, ExpectedValue[] values)
{
    public Snapshot Snapshot { get; } = snapshot;

    public long Lower { get; } = lower;

    public long Upper { get; } = upper;

    public ExpectedValue[] Values { get; } = values;
}
