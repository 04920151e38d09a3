using KvEngine.Storage;
using KvEngine.Tests.Db;

namespace KvEngine.Tests.Merge;

/// <summary>
/// Merge operands survive crashes as any write does: uint64add counters (merges, with now and then a
/// Put resetting a counter) written with and without sync, flushes and compactions in between, then
/// a simulated process crash or power loss and a reopen. The counters must equal the replay of some
/// prefix of the writes no shorter than the durable one (every acknowledged write after a process
/// crash; every synced or flushed one after a power loss).
/// </summary>
public sealed class MergeCrashTests
{
    private const int Keys = 20;
    private static readonly WriteOptions s_sync = new() { Sync = true };
    private static readonly WriteOptions s_noSync = new();

    [Theory]
    [InlineData(1, true)]
    [InlineData(2, true)]
    [InlineData(3, false)]
    [InlineData(4, false)]
    public void CountersHoldADurablePrefixAfterACrash(int seed, bool powerLoss)
    {
        var rng = new Random(seed);
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        KvOptions options = DbTestUtil.SmallOptions(fs, 8 << 10, 3);
        options.MergeOperator = UInt64AddOperator.Instance;
        var committed = new ulong?[Keys]; // the state checked after the previous crash
        KvDb db = KvDb.Open(DbTestUtil.DbPath, options);
        try
        {
            for (int cycle = 0; cycle < 8; cycle++)
            {
                var ops = new List<(int Key, bool Put, ulong Amount)>();
                int durable = 0;
                int target = rng.Next(50, 800);
                while (ops.Count < target)
                {
                    int r = rng.Next(100);
                    if (r < 2)
                    {
                        db.Flush();
                        durable = ops.Count;
                        continue;
                    }
                    if (r < 3)
                    {
                        db.CompactRange(null, null);
                        durable = ops.Count;
                        continue;
                    }
                    int key = rng.Next(Keys);
                    bool put = rng.Next(10) == 0;
                    ulong amount = (ulong)rng.Next(1, 1000);
                    bool sync = r < 15;
                    if (put)
                    {
                        db.Put(Key(key), UInt64AddOperator.Encode(amount), sync ? s_sync : s_noSync);
                    }
                    else
                    {
                        db.Merge(Key(key), UInt64AddOperator.Encode(amount), sync ? s_sync : s_noSync);
                    }
                    ops.Add((key, put, amount));
                    if (sync || !powerLoss)
                    {
                        durable = ops.Count;
                    }
                }
                DbTestUtil.Abandon(fs, db, powerLoss);
                db = KvDb.Open(DbTestUtil.DbPath, options);
                committed = CheckPrefix(db, committed, ops, durable, $"seed {seed} cycle {cycle}");
            }
        }
        finally
        {
            db.Dispose();
        }
    }

    private static byte[] Key(int k) => System.Text.Encoding.ASCII.GetBytes($"counter{k:D2}");

    // The database's counters equal the state after ops[0..p) for some p >= durable; returns that state.
    private static ulong?[] CheckPrefix(KvDb db, ulong?[] before, List<(int Key, bool Put, ulong Amount)> ops, int durable, string where)
    {
        var actual = new ulong?[Keys];
        for (int k = 0; k < Keys; k++)
        {
            byte[]? v = db.Get(Key(k));
            actual[k] = v == null ? null : UInt64AddOperator.Decode(v);
        }
        var state = (ulong?[])before.Clone();
        for (int p = 0; p <= ops.Count; p++)
        {
            if (p >= durable && state.AsSpan().SequenceEqual(actual))
            {
                return actual;
            }
            if (p < ops.Count)
            {
                (int key, bool put, ulong amount) = ops[p];
                state[key] = put ? amount : (state[key] ?? 0) + amount;
            }
        }
        Assert.Fail($"{where}: the counters after reopening match no prefix of at least {durable} of the {ops.Count} writes");
        return actual;
    }
}
