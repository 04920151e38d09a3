using KvEngine.Storage;
using KvEngine.Stress;

namespace KvEngine.Tests.Stress;

/// <summary>
/// kvstress's verifier on hand-made histories: each kind of loss it exists to find (a durable
/// write lost, a hole in the recovered prefix, a torn batch, a phantom value, a pending key holding
/// a third state) is reported, and what the durability model allows (an unsynced write lost after
/// a power cut, a pending write either way) passes. Keys 0-4 belong to thread 0, 5-9 to thread 1.
/// </summary>
public sealed class StressVerifierTests : IDisposable
{
    private const int Mult = 8;
    private readonly FaultInjectionFileSystem _fs = new();
    private readonly KvDb _db;
    private readonly StressFlags _flags = StressFlags.Parse(["-max_key=10", "-threads=2", "-power_loss_cycles=1", "-value_size_mult=8"]);
    private readonly ExpectedState _state = ExpectedState.Open("", 10, Mult, reset: true);
    private readonly DurabilityTracker _tracker = new(2);
    private readonly StressStats _stats = new();

    public StressVerifierTests()
    {
        _fs.CreateDirectory("/t");
        _db = KvDb.Open("/t/db", new KvOptions { FileSystem = _fs });
    }

    public void Dispose()
    {
        _db.Dispose();
        _state.Dispose();
    }

    [Fact]
    public void SyncedWriteMissingAfterPowerLossIsALostWrite()
    {
        Record(1, ExpectedValue.Put(1), synced: true);
        string msg = Fails(powerLost: true);
        Assert.Contains("LOST WRITE: key 1 is absent", msg, StringComparison.Ordinal);
    }

    [Fact]
    public void WriteAcknowledgedBeforeASyncOrFlushIsDurable()
    {
        Record(1, ExpectedValue.Put(1), synced: false);
        _tracker.MarkDurableBefore(_tracker.Tick()); // a later sync write or flush succeeded
        Assert.Contains("LOST WRITE: key 1", Fails(powerLost: true), StringComparison.Ordinal);
    }

    [Fact]
    public void UnsyncedWriteMayBeLostToAPowerCutButNotToAReopen()
    {
        Record(1, ExpectedValue.Put(1), synced: false);
        Assert.Contains("LOST WRITE: key 1", Fails(powerLost: false), StringComparison.Ordinal);

        Verifier().VerifyAll(_db, powerLost: true, "test");
        Assert.Equal(1, _stats[StressCounter.UnsyncedWritesLost]);
        Assert.False(_state.Committed(1).Exists);
        Assert.Equal(2u, _state.Next(1, exists: true).Base); // base 1 stays used: a later write is distinguishable
    }

    [Fact]
    public void SurvivingWriteWithAnOlderAcknowledgedWriteMissingIsNotAPrefix()
    {
        Record(1, ExpectedValue.Put(1), synced: false);
        Record(6, ExpectedValue.Put(1), synced: false);
        Put(6, 1);
        Assert.Contains("NOT A PREFIX: key 1 lost position 1", Fails(powerLost: true), StringComparison.Ordinal);
    }

    [Fact]
    public void BatchVisibleOnOneKeyOnlyIsTorn()
    {
        long start = _tracker.Tick(), ack = _tracker.Tick();
        _tracker.Record(0, 1, _state.Committed(1), new HistoryEntry(ExpectedValue.Put(1), start, ack, 42, false), multiKey: true);
        _tracker.Record(0, 2, _state.Committed(2), new HistoryEntry(ExpectedValue.Put(1), start, ack, 42, false), multiKey: true);
        Put(1, 1);
        Assert.Contains("TORN WRITE: operation 42 is visible on key 1 but not on key 2", Fails(powerLost: true), StringComparison.Ordinal);
    }

    [Fact]
    public void FailedBatchMaskedByALaterDeleteIsNotTorn()
    {
        Put(1, 1);
        Put(2, 1);
        _state.Resolve(1, ExpectedValue.Put(1));
        _state.Resolve(2, ExpectedValue.Put(1));
        long start = _tracker.Tick();
        // A DeleteRange over keys 1-2 failed (unacknowledged); after Resume key 1 was deleted again.
        _tracker.Record(0, 1, _state.Committed(1), new HistoryEntry(ExpectedValue.Deleted(2), start, long.MaxValue, 42, false), multiKey: true);
        _tracker.Record(0, 2, _state.Committed(2), new HistoryEntry(ExpectedValue.Deleted(2), start, long.MaxValue, 42, false), multiKey: true);
        Record(1, ExpectedValue.Deleted(3), synced: true);
        _db.Delete(StressKeys.Key(1));
        Verifier().VerifyAll(_db, powerLost: true, "test"); // key 1 absent by the later delete, key 2 untouched: consistent
        Assert.True(_state.Committed(2).Exists);
    }

    [Fact]
    public void ValueNoWriteProducedIsReported()
    {
        Record(3, ExpectedValue.Put(1), synced: true);
        Put(3, 7);
        Assert.Contains("key 3 is value(base 7), which no write since position 1 produced", Fails(powerLost: true), StringComparison.Ordinal);
    }

    [Fact]
    public void CorruptValueIsReportedWithItsBytes()
    {
        _db.Put(StressKeys.Key(8), [1, 0, 0, 0, 9, 9, 9, 9]);
        string msg = Assert.Throws<VerificationException>(() => new DbVerifier(_flags, _state, null, _stats).VerifyAll(_db, false, "test")).Message;
        Assert.Contains("key 8 is 8-byte value claiming base 1 but with wrong bytes", msg, StringComparison.Ordinal);
    }

    [Fact]
    public void PendingKeyMayHoldEitherStateButNoThird()
    {
        var verifier = new DbVerifier(_flags, _state, null, _stats);
        _state.BeginWrite(4, ExpectedValue.Put(1));
        Put(4, 1);
        verifier.VerifyAll(_db, false, "test");
        Assert.Equal(1, _stats[StressCounter.PendingResolved]);
        Assert.Equal(ExpectedValue.Put(1), _state.Committed(4));

        _state.BeginWrite(4, ExpectedValue.Put(2));
        Put(4, 3);
        string msg = Assert.Throws<VerificationException>(() => verifier.VerifyAll(_db, false, "test")).Message;
        Assert.Contains("key 4 is value(base 3), expected value(base 1) or value(base 2) pending", msg, StringComparison.Ordinal);
    }

    [Fact]
    public void KeyOutsideTheKeySpaceIsReported()
    {
        _db.Put("zz"u8, "x"u8);
        Assert.Contains("never writes", Assert.Throws<VerificationException>(() => Verifier().VerifyAll(_db, false, "test")).Message, StringComparison.Ordinal);
    }

    private DbVerifier Verifier() => new(_flags, _state, _tracker, _stats);

    private string Fails(bool powerLost) => Assert.Throws<VerificationException>(() => Verifier().VerifyAll(_db, powerLost, "test")).Message;

    private void Record(long key, ExpectedValue value, bool synced)
    {
        long start = _tracker.Tick(), ack = _tracker.Tick();
        int thread = KeyStripes.Owner(key, 2, 10);
        _tracker.Record(thread, key, _state.Committed(key), new HistoryEntry(value, start, ack, _tracker.NextOpId(), synced), multiKey: false);
    }

    private void Put(long key, uint valueBase) => _db.Put(StressKeys.Key(key), StressKeys.Value(key, valueBase, Mult));
}
