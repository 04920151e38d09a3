using KvEngine.Storage;
using KvEngine.Tests.Db;

namespace KvEngine.Tests.RangeDel;

/// <summary>
/// Random Put/Delete/DeleteRange/WriteBatch/snapshot/flush/compact/reopen sequences against an
/// in-memory sorted model: every Get, snapshot Get and iterator walk (both directions, with
/// bounds) must agree exactly. Deterministic per seed (compactions run on the calling thread or
/// are off), thousands of operations per seed.
/// </summary>
public sealed class RangeDelModelTests
{
    private const int KeySpace = 300;

    public static TheoryData<int, bool> Seeds()
    {
        var data = new TheoryData<int, bool>();
        for (int seed = 1; seed <= 4; seed++)
        {
            data.Add(seed, false);
        }
        for (int seed = 5; seed <= 20; seed++)
        {
            data.Add(seed, true);
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Seeds))]
    public void AgreesWithModel(int seed, bool compact)
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/rd");
        var options = new KvOptions
        {
            FileSystem = fs,
            WriteBufferSize = (seed % 2 == 0 ? 8 : 32) << 10,
            MaxWriteBufferNumber = 3,
            MinWriteBufferNumberToMerge = seed % 4 == 3 ? 2 : 1, // some flushes merge two memtables
            DisableAutoCompactions = true,
            BlockSize = seed % 3 == 0 ? 256 : 4096,
            Compression = seed % 2 == 0 ? KvCompressionType.Lz4 : KvCompressionType.None,
            // Small levels and files: many outputs per compaction (tombstones cut at file
            // boundaries) and several levels (tombstones must outlive compactions above data).
            TargetFileSizeBase = 2048,
            MaxBytesForLevelBase = 8192,
        };
        Run(seed, options, "/rd/db", 4000, compact);
    }

    internal static void Run(int seed, KvOptions options, string path, int operations, bool compact)
    {
        var rng = new Random(seed);
        var model = new SortedDictionary<byte[], byte[]>(ByteArrayComparer.Instance);
        var snapshots = new ModelSnapshots();
        KvDb db = KvDb.Open(path, options);
        try
        {
            for (int op = 0; op < operations; op++)
            {
                string where = $"seed {seed} op {op}";
                int dice = rng.Next(1000);
                if (dice < 380)
                {
                    byte[] k = Key(rng.Next(KeySpace));
                    byte[] v = Value(rng, op);
                    db.Put(k, v);
                    model[k] = v;
                }
                else if (dice < 440)
                {
                    byte[] k = Key(rng.Next(KeySpace));
                    db.Delete(k);
                    model.Remove(k);
                }
                else if (dice < 500)
                {
                    (byte[] begin, byte[] end) = RandomRange(rng);
                    if (rng.Next(2) == 0)
                    {
                        db.DeleteRange(begin, end);
                    }
                    else
                    {
                        db.DeleteRangeAsync(begin, end).AsTask().GetAwaiter().GetResult();
                    }
                    RemoveRange(model, begin, end);
                }
                else if (dice < 540)
                {
                    // A batch mixing puts, deletes and a range deletion: later records win.
                    using var batch = new WriteBatch();
                    int n = rng.Next(1, 8);
                    for (int i = 0; i < n; i++)
                    {
                        int kind = rng.Next(4);
                        if (kind == 0)
                        {
                            (byte[] begin, byte[] end) = RandomRange(rng);
                            batch.DeleteRange(begin, end);
                            RemoveRange(model, begin, end);
                        }
                        else if (kind == 1)
                        {
                            byte[] k = Key(rng.Next(KeySpace));
                            batch.Delete(k);
                            model.Remove(k);
                        }
                        else
                        {
                            byte[] k = Key(rng.Next(KeySpace));
                            byte[] v = Value(rng, op);
                            batch.Put(k, v);
                            model[k] = v;
                        }
                    }
                    db.Write(batch);
                }
                else if (dice < 760)
                {
                    byte[] k = Key(rng.Next(KeySpace));
                    model.TryGetValue(k, out byte[]? want);
                    byte[]? got = db.Get(k);
                    Assert.True(Same(want, got), $"{where}: Get({S(k)}) = {S(got)}, model {S(want)}");
                }
                else if (dice < 820)
                {
                    CheckIterator(db, model, rng, null, where);
                }
                else if (dice < 860)
                {
                    snapshots.TakeOrRelease(db, model, rng, 3);
                }
                else if (dice < 900)
                {
                    if (snapshots.Count > 0)
                    {
                        (Snapshot snap, SortedDictionary<byte[], byte[]> state) = snapshots.Pick(rng);
                        byte[] k = Key(rng.Next(KeySpace));
                        state.TryGetValue(k, out byte[]? want);
                        byte[]? got = db.Get(k, new ReadOptions { Snapshot = snap });
                        Assert.True(Same(want, got), $"{where}: snapshot Get({S(k)}) = {S(got)}, model {S(want)}");
                        if (rng.Next(4) == 0)
                        {
                            CheckIterator(db, state, rng, snap, where + " (snapshot)");
                        }
                    }
                }
                else if (dice < 940)
                {
                    db.Flush();
                }
                else if (dice < 970)
                {
                    if (compact)
                    {
                        byte[]? begin = rng.Next(3) == 0 ? null : Key(rng.Next(KeySpace));
                        byte[]? end = begin == null || rng.Next(3) == 0 ? null : Key(rng.Next(KeySpace));
                        if (begin != null && end != null && ByteArrayComparer.Instance.Compare(begin, end) > 0)
                        {
                            (begin, end) = (end, begin);
                        }
                        switch (rng.Next(4))
                        {
                            case 0:
                                db.CompactRange(begin, end);
                                break;
                            case 1:
                                // One level into the next over a sub-range: what lies deeper stays.
                                int level = rng.Next(4);
                                db.Flush();
                                db.Impl.CompactLevel(level, level + 1, begin, end);
                                break;
                            default:
                                db.Flush();
                                db.Impl.RunCompactionsInline();
                                break;
                        }
                    }
                }
                else if (dice < 975)
                {
                    snapshots.ReleaseAll();
                    db.Dispose();
                    db = KvDb.Open(path, options);
                }
                else
                {
                    CheckIterator(db, model, rng, null, where + " (late)");
                }
            }
            CheckFullScan(db, model, $"seed {seed} final");
            if (compact)
            {
                // The run must have reached the sorted levels, where tombstones are clipped per file.
                int deeper = 0;
                for (int level = 1; level < 7; level++)
                {
                    deeper += int.Parse(db.GetProperty($"rocksdb.num-files-at-level{level}")!, System.Globalization.CultureInfo.InvariantCulture);
                }
                Assert.True(deeper > 0, $"seed {seed}: no file below level 0");
            }
            db.Dispose();
            db = KvDb.Open(path, options);
            CheckFullScan(db, model, $"seed {seed} after reopen");
        }
        finally
        {
            snapshots.ReleaseAll();
            db.Dispose();
        }
    }

    internal static byte[] Key(int id) => System.Text.Encoding.ASCII.GetBytes($"k{id:D4}");

    private static (byte[] Begin, byte[] End) RandomRange(Random rng)
    {
        int a = rng.Next(KeySpace);
        // Mostly short ranges, some wide ones, some ending between keys ("k0042x").
        int width = rng.Next(10) == 0 ? rng.Next(KeySpace / 2) : rng.Next(1, 12);
        byte[] begin = Key(a);
        byte[] end = rng.Next(4) == 0 ? [.. Key(a + width), (byte)'x'] : Key(a + width);
        return (begin, end);
    }

    /// <summary>Applies a delete-range to a model: every key in [begin, end) goes.</summary>
    internal static void RemoveRange(SortedDictionary<byte[], byte[]> model, byte[] begin, byte[] end)
    {
        var doomed = new List<byte[]>();
        foreach (byte[] k in model.Keys)
        {
            if (ByteArrayComparer.Instance.Compare(k, begin) >= 0 && ByteArrayComparer.Instance.Compare(k, end) < 0)
            {
                doomed.Add(k);
            }
        }
        foreach (byte[] k in doomed)
        {
            model.Remove(k);
        }
    }

    private static byte[] Value(Random rng, int op)
    {
        var v = new byte[rng.Next(4, 60)];
        rng.NextBytes(v);
        BitConverter.TryWriteBytes(v, op);
        return v;
    }

    internal static void CheckFullScan(KvDb db, SortedDictionary<byte[], byte[]> model, string where)
    {
        using KvIterator it = db.NewIterator();
        it.SeekToFirst();
        foreach (KeyValuePair<byte[], byte[]> e in model)
        {
            Assert.True(it.Valid, $"{where}: iterator ended before {S(e.Key)}");
            Assert.Equal(S(e.Key), S(it.Key.ToArray()));
            Assert.Equal(e.Value, it.Value.ToArray());
            it.Next();
        }
        Assert.False(it.Valid, $"{where}: iterator has extra entries");
        it.SeekToLast();
        foreach (KeyValuePair<byte[], byte[]> e in model.Reverse())
        {
            Assert.True(it.Valid, $"{where}: reverse iterator ended before {S(e.Key)}");
            Assert.Equal(S(e.Key), S(it.Key.ToArray()));
            it.Prev();
        }
        Assert.False(it.Valid, $"{where}: reverse iterator has extra entries");
    }

    private static void CheckIterator(KvDb db, SortedDictionary<byte[], byte[]> model, Random rng, Snapshot? snap, string where) =>
        ModelIteratorCheck.Run(db, model, rng, snap, where, r => Key(r.Next(KeySpace)), steps: 80, S);

    private static bool Same(byte[]? a, byte[]? b) => a == null ? b == null : b != null && a.AsSpan().SequenceEqual(b);

    private static string S(byte[]? b) => b == null ? "null" : System.Text.Encoding.ASCII.GetString(b.Length > 12 ? b.AsSpan(0, 12) : b);
}
