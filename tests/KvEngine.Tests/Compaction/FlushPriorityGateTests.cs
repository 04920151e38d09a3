using KvEngine.Compaction;
using KvEngine.Storage;

using static KvEngine.Tests.Compaction.CompactionTestUtil;

namespace KvEngine.Tests.Compaction;

/// <summary>Compactions give way to flushes (<see cref="KvOptions.CompactionsYieldToFlushes"/>).</summary>
public sealed class FlushPriorityGateTests
{
    private static readonly TimeSpan s_guard = TimeSpan.FromSeconds(60); // a hang fails instead of blocking the run

    private readonly FaultInjectionFileSystem _fs = new();

    public FlushPriorityGateTests() => _fs.CreateDirectory("/g");

    [Fact]
    public void WaitReturnsAtOnceWhenNoFlushHolds()
    {
        var gate = new FlushPriorityGate();
        gate.WaitWhileHeld(CancellationToken.None);
        Assert.False(gate.IsHeld);
        Assert.Equal(0, gate.Waits);
    }

    [Fact]
    public async Task WaiterRunsOnceEveryHolderReleased()
    {
        var gate = new FlushPriorityGate();
        gate.Hold();
        gate.Hold(); // two flushes (two families)
        Task waiter = Task.Run(() => gate.WaitWhileHeld(CancellationToken.None));
        Assert.True(SpinWait.SpinUntil(() => gate.Waits == 1, s_guard));
        gate.Release();
        Assert.True(gate.IsHeld);
        Assert.False(waiter.IsCompleted); // one flush still runs
        gate.Release();
        await waiter.WaitAsync(s_guard);
        Assert.Equal(2, gate.Holds);
        Assert.Throws<InvalidOperationException>(gate.Release);
    }

    [Fact]
    public async Task CancellationEndsTheWait()
    {
        var gate = new FlushPriorityGate();
        gate.Hold();
        using var cancel = new CancellationTokenSource();
        Task waiter = Task.Run(() => gate.WaitWhileHeld(cancel.Token));
        Assert.True(SpinWait.SpinUntil(() => gate.Waits == 1, s_guard));
        cancel.Cancel();
        await waiter.WaitAsync(s_guard);
        Assert.True(gate.IsHeld);
    }

    [Fact]
    public async Task CompactionParksWhileAFlushHoldsTheGate()
    {
        KvOptions o = Tiny(_fs, autoCompactions: false);
        using KvDb db = KvDb.Open("/g/db", o);
        var value = new byte[50];
        for (int f = 0; f < 2; f++)
        {
            for (int i = 0; i < 1000; i++)
            {
                value[0] = (byte)f;
                db.Put(K($"key{i:D4}"), value);
            }
            db.Flush();
        }
        FlushPriorityGate gate = db.Impl.FlushGate!;
        gate.Hold(); // as a running flush does
        Task compaction = Task.Run(() => db.CompactRange(null, null));
        Assert.True(SpinWait.SpinUntil(() => gate.Waits > 0 || compaction.IsCompleted, s_guard));
        Assert.Equal(1, gate.Waits);
        Assert.False(compaction.IsCompleted); // 2,000 input keys: it cannot pass the gate while held
        gate.Release();
        await compaction.WaitAsync(s_guard);
        Assert.Equal(0, Files(db, 0));
        for (int i = 0; i < 1000; i++)
        {
            Assert.Equal(1, db.Get(K($"key{i:D4}"))![0]);
        }
    }

    [Fact]
    public async Task FlushesHoldTheGateUnlessLevel0SlowsWritesDown()
    {
        KvOptions o = Tiny(_fs);
        o.Level0FileNumCompactionTrigger = 4;
        o.Level0SlowdownWritesTrigger = 4;
        o.Level0StopWritesTrigger = 8;
        // The compaction the fourth flush starts stops at its first key until the test is done,
        // so level 0 keeps its four files for the fifth flush.
        using var filter = new BlockingFilter();
        o.CompactionFilter = filter;
        using KvDb db = KvDb.Open("/g/db", o);
        FlushPriorityGate gate = db.Impl.FlushGate!;
        for (int f = 0; f < 4; f++)
        {
            db.Put(K($"k{f}"), K("v"));
            db.Flush(); // level 0 below the slowdown trigger: the flush goes first
            Assert.Equal(f + 1, gate.Holds);
        }
        Assert.True(filter.Entered.Wait(s_guard));
        Assert.Equal(4, Files(db, 0));
        db.Put(K("k4"), K("v")); // delayed once (slowdown), not stopped
        await Task.Run(db.Flush).WaitAsync(s_guard);
        Assert.Equal(4, gate.Holds); // four level-0 files slow writes down: compactions keep going
        filter.Release.Set();
        db.CompactRange(null, null);
        Assert.Equal("v", System.Text.Encoding.ASCII.GetString(db.Get(K("k4"))!));
    }

    /// <summary>Keeps every value; its first call waits for <see cref="Release"/>.</summary>
    private sealed class BlockingFilter : KvCompactionFilter, IDisposable
    {
        public ManualResetEventSlim Entered { get; } = new();

        public ManualResetEventSlim Release { get; } = new();

        public override string Name => "BlockingFilter";

        public override KvCompactionFilterDecision FilterValue(int level, ReadOnlySpan<byte> key, ReadOnlySpan<byte> existingValue,
            System.Buffers.IBufferWriter<byte> newValue)
        {
            Entered.Set();
            Release.Wait(s_guard);
            return KvCompactionFilterDecision.Keep;
        }

        public void Dispose()
        {
            Entered.Dispose();
            Release.Dispose();
        }
    }

    [Fact]
    public void OffMeansNoGate()
    {
        KvOptions o = Tiny(_fs);
        o.CompactionsYieldToFlushes = false;
        using KvDb db = KvDb.Open("/g/db", o);
        Assert.Null(db.Impl.FlushGate);
    }
}
