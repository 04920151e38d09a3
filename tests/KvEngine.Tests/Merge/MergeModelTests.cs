using System.Buffers;
using KvEngine.Storage;
using KvEngine.Tests.Db;

namespace KvEngine.Tests.Merge;

/// <summary>
/// Random Put/Merge/Delete/DeleteRange/WriteBatch/snapshot/flush/compact/reopen sequences against
/// an in-memory model in which a merge applies the operator at once (its full merge of the current
/// value, if any, and one operand): every Get, snapshot Get and iterator walk (both directions, with
/// bounds) must agree exactly. Three operators: string append (order-sensitive, with partial merges),
/// one that declines partial merges (compactions keep operand runs) and uint64add (8-byte counters,
/// plus malformed operands counting 0). Deterministic per seed (compactions run on the calling thread).
/// </summary>
public sealed class MergeModelTests
{
    private const int KeySpace = 200;

    public static TheoryData<int> Seeds()
    {
        var data = new TheoryData<int>();
        for (int seed = 1; seed <= 12; seed++)
        {
            data.Add(seed);
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Seeds))]
    public void AgreesWithModel(int seed)
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/m");
        KvMergeOperator op = (seed % 3) switch
        {
            0 => new StringAppendOperator(),
            1 => new AppendWithoutPartialMerge(),
            _ => UInt64AddOperator.Instance,
        };
        var options = new KvOptions
        {
            FileSystem = fs,
            MergeOperator = op,
            WriteBufferSize = (seed % 2 == 0 ? 8 : 32) << 10,
            MaxWriteBufferNumber = 3,
            MinWriteBufferNumberToMerge = seed % 4 == 3 ? 2 : 1,
            DisableAutoCompactions = true,
            BlockSize = seed % 3 == 0 ? 256 : 4096,
            TargetFileSizeBase = 2048,
            MaxBytesForLevelBase = 8192,
        };
        Run(seed, op, options, "/m/db", 4000);
    }

    private static void Run(int seed, KvMergeOperator op, KvOptions options, string path, int operations)
    {
        var rng = new Random(seed);
        var model = new SortedDictionary<byte[], byte[]>(ByteArrayComparer.Instance);
        var snapshots = new ModelSnapshots();
        bool counters = op is UInt64AddOperator;
        bool rangeDeletes = seed % 4 != 0; // without any, iterators take the no-tombstone merge paths
        KvDb db = KvDb.Open(path, options);
        try
        {
            for (int i = 0; i < operations; i++)
            {
                string where = $"seed {seed} op {i}";
                int dice = rng.Next(1000);
                if (dice < 150)
                {
                    byte[] k = Key(rng.Next(KeySpace));
                    byte[] v = Value(rng, i, counters);
                    db.Put(k, v);
                    model[k] = v;
                }
                else if (dice < 430)
                {
                    byte[] k = Key(rng.Next(KeySpace));
                    byte[] operand = Value(rng, i, counters);
                    if (rng.Next(4) == 0)
                    {
                        db.MergeAsync(k, operand).AsTask().GetAwaiter().GetResult();
                    }
                    else
                    {
                        db.Merge(k, operand);
                    }
                    ApplyMerge(op, model, k, operand);
                }
                else if (dice < 470)
                {
                    byte[] k = Key(rng.Next(KeySpace));
                    db.Delete(k);
                    model.Remove(k);
                }
                else if (dice < 490 && rangeDeletes)
                {
                    int a = rng.Next(KeySpace);
                    byte[] begin = Key(a);
                    byte[] end = Key(a + rng.Next(1, 10));
                    db.DeleteRange(begin, end);
                    foreach (byte[] k in model.Keys.Where(k => ByteArrayComparer.Instance.Compare(k, begin) >= 0 && ByteArrayComparer.Instance.Compare(k, end) < 0).ToList())
                    {
                        model.Remove(k);
                    }
                }
                else if (dice < 520)
                {
                    // A batch (or, in seeds without range deletions, their share of the dice) of merges, puts and deletes on few keys: later records win, operands stack.
                    using var batch = new WriteBatch();
                    int n = rng.Next(1, 8);
                    for (int j = 0; j < n; j++)
                    {
                        byte[] k = Key(rng.Next(8));
                        int kind = rng.Next(5);
                        if (kind == 0)
                        {
                            batch.Delete(k);
                            model.Remove(k);
                        }
                        else if (kind == 1)
                        {
                            byte[] v = Value(rng, i, counters);
                            batch.Put(k, v);
                            model[k] = v;
                        }
                        else
                        {
                            byte[] operand = Value(rng, i, counters);
                            batch.Merge(k, operand);
                            ApplyMerge(op, model, k, operand);
                        }
                    }
                    db.Write(batch);
                }
                else if (dice < 740)
                {
                    byte[] k = Key(rng.Next(KeySpace));
                    model.TryGetValue(k, out byte[]? want);
                    byte[]? got = db.Get(k);
                    Assert.True(Same(want, got), $"{where}: Get({S(k)}) = {S(got)}, model {S(want)}");
                }
                else if (dice < 800)
                {
                    ModelIteratorCheck.Run(db, model, rng, null, where, r => Key(r.Next(KeySpace)), steps: 60, S);
                }
                else if (dice < 840)
                {
                    snapshots.TakeOrRelease(db, model, rng, 3);
                }
                else if (dice < 880)
                {
                    if (snapshots.Count > 0)
                    {
                        (Snapshot snap, SortedDictionary<byte[], byte[]> state) = snapshots.Pick(rng);
                        byte[] k = Key(rng.Next(KeySpace));
                        state.TryGetValue(k, out byte[]? want);
                        byte[]? got = db.Get(k, new ReadOptions { Snapshot = snap });
                        Assert.True(Same(want, got), $"{where}: snapshot Get({S(k)}) = {S(got)}, model {S(want)}");
                        if (rng.Next(3) == 0)
                        {
                            ModelIteratorCheck.Run(db, state, rng, snap, where + " (snapshot)", r => Key(r.Next(KeySpace)), steps: 60, S);
                        }
                    }
                }
                else if (dice < 930)
                {
                    db.Flush();
                }
                else if (dice < 975)
                {
                    byte[]? begin = rng.Next(3) == 0 ? null : Key(rng.Next(KeySpace));
                    switch (rng.Next(3))
                    {
                        case 0:
                            db.CompactRange(begin, null);
                            break;
                        case 1:
                            int level = rng.Next(4);
                            db.Flush();
                            db.Impl.CompactLevel(level, level + 1, begin, null);
                            break;
                        default:
                            db.Flush();
                            db.Impl.RunCompactionsInline();
                            break;
                    }
                }
                else if (dice < 985)
                {
                    snapshots.ReleaseAll();
                    db.Dispose();
                    db = KvDb.Open(path, options);
                }
                else
                {
                    ModelIteratorCheck.Run(db, model, rng, null, where + " (late)", r => Key(r.Next(KeySpace)), steps: 60, S);
                }
            }
            snapshots.ReleaseAll();
            RangeDel.RangeDelModelTests.CheckFullScan(db, model, $"seed {seed} final");
            int deeper = 0;
            for (int level = 1; level < 7; level++)
            {
                deeper += int.Parse(db.GetProperty($"rocksdb.num-files-at-level{level}")!, System.Globalization.CultureInfo.InvariantCulture);
            }
            Assert.True(deeper > 0, $"seed {seed}: no file below level 0");
            db.CompactRange(null, null);
            RangeDel.RangeDelModelTests.CheckFullScan(db, model, $"seed {seed} after a full compaction");
            db.Dispose();
            db = KvDb.Open(path, options);
            RangeDel.RangeDelModelTests.CheckFullScan(db, model, $"seed {seed} after reopen");
        }
        finally
        {
            snapshots.ReleaseAll();
            db.Dispose();
        }
    }

    private static void ApplyMerge(KvMergeOperator op, SortedDictionary<byte[], byte[]> model, byte[] k, byte[] operand)
    {
        bool has = model.TryGetValue(k, out byte[]? existing);
        var result = new ArrayBufferWriter<byte>();
        Assert.True(op.TryFullMerge(k, has, existing, new[] { (ReadOnlyMemory<byte>)operand }, result));
        model[k] = result.WrittenSpan.ToArray();
    }

    private static byte[] Key(int id) => System.Text.Encoding.ASCII.GetBytes($"k{id:D4}");

    private static byte[] Value(Random rng, int op, bool counter)
    {
        if (counter)
        {
            // Mostly 8-byte increments; now and then a malformed one, which uint64add reads as 0.
            return rng.Next(20) == 0 ? [1, 2, 3] : UInt64AddOperator.Encode((ulong)rng.Next(1, 1000));
        }
        return System.Text.Encoding.ASCII.GetBytes($"v{op}.{rng.Next(100)}");
    }

    private static bool Same(byte[]? a, byte[]? b) => a == null ? b == null : b != null && a.AsSpan().SequenceEqual(b);

    private static string S(byte[]? b) => b == null ? "null" : Convert.ToHexString(b.Length > 24 ? b.AsSpan(0, 24) : b);
}
