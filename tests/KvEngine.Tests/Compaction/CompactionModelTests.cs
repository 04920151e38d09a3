using KvEngine.Storage;
using KvEngine.Tests.Db;
using KvEngine.Versions;

namespace KvEngine.Tests.Compaction;

/// <summary>
/// Random operations against the engine and a sorted model with sizes so tiny that compactions run
/// all the time (16 KiB memtables, 8 KiB files, 32 KiB level 1, level-0 trigger 2), with snapshots
/// held across compactions, manual compactions and reopens. Gets, scans and snapshot reads must
/// agree with the model throughout, and after the last reopen the directory holds exactly the
/// live tables.
/// </summary>
public sealed class CompactionModelTests
{
    public static TheoryData<int, bool, bool> Cases() => new()
    {
        { 1, false, true },
        { 2, true, true },
        { 3, false, false },
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public void AgreesWithModelWhileCompacting(int seed, bool dynamicLevels, bool alignOutputs)
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/m");
        KvOptions options = CompactionTestUtil.Tiny(fs);
        options.LevelCompactionDynamicLevelBytes = dynamicLevels;
        options.LevelCompactionDynamicFileSize = alignOutputs;
        Run(seed, options, "/m/db", 12_000);
        CheckNoLeakedTables(fs, "/m/db", options);
    }

    internal static void CheckNoLeakedTables(IFileSystem fs, string path, KvOptions options)
    {
        // No background compaction may create an output between reading the version and listing.
        KvOptions quiet = options.Clone();
        quiet.DisableAutoCompactions = true;
        using KvDb db = KvDb.Open(path, quiet);
        var live = new HashSet<ulong>();
        for (int level = 0; level < KvEngine.Versions.Version.NumLevels; level++)
        {
            foreach (KvEngine.Versions.FileMetaData f in db.Impl.Versions.Current.Files(level))
            {
                live.Add(f.Number);
            }
        }
        var onDisk = new HashSet<ulong>();
        foreach (string name in fs.GetChildren(db.Path))
        {
            if (KvEngine.Versions.FileNames.TryParse(name, out KvEngine.Versions.DbFileType type, out ulong number) && type == KvEngine.Versions.DbFileType.Table)
            {
                onDisk.Add(number);
            }
        }
        Assert.True(live.SetEquals(onDisk), $"tables on disk [{string.Join(",", onDisk)}] differ from live [{string.Join(",", live)}]");
    }

    private static void Run(int seed, KvOptions options, string path, int operations)
    {
        var rng = new Random(seed);
        var model = new SortedDictionary<byte[], byte[]>(ByteArrayComparer.Instance);
        var snapshots = new ModelSnapshots();
        KvDb db = KvDb.Open(path, options);
        int maxDepth = 0;
        long compactions = 0;
        try
        {
            for (int op = 0; op < operations; op++)
            {
                int dice = rng.Next(1000);
                string where = $"seed {seed} op {op}";
                if (dice < 550)
                {
                    byte[] k = RandomKey(rng);
                    byte[] v = RandomValue(rng);
                    db.Put(k, v);
                    model[k] = v;
                }
                else if (dice < 680)
                {
                    byte[] k = RandomKey(rng);
                    db.Delete(k);
                    model.Remove(k);
                }
                else if (dice < 880)
                {
                    byte[] k = RandomKey(rng);
                    model.TryGetValue(k, out byte[]? want);
                    Assert.True(Same(want, db.Get(k)), $"{where}: Get differs for {Convert.ToHexString(k)}");
                }
                else if (dice < 890)
                {
                    CheckScan(db, model, null, where);
                }
                else if (dice < 910)
                {
                    snapshots.TakeOrRelease(db, model, rng, 3);
                }
                else if (dice < 970)
                {
                    if (snapshots.Count > 0)
                    {
                        (Snapshot snap, SortedDictionary<byte[], byte[]> state) = snapshots.Pick(rng);
                        byte[] k = RandomKey(rng);
                        state.TryGetValue(k, out byte[]? want);
                        Assert.True(Same(want, db.Get(k, new ReadOptions { Snapshot = snap })), $"{where}: snapshot Get differs");
                        if (rng.Next(20) == 0)
                        {
                            CheckScan(db, state, snap, where + " (snapshot)");
                        }
                    }
                }
                else if (dice < 975)
                {
                    byte[] a = RandomKey(rng);
                    byte[] b = RandomKey(rng);
                    if (ByteArrayComparer.Instance.Compare(a, b) > 0)
                    {
                        (a, b) = (b, a);
                    }
                    db.CompactRange(rng.Next(4) == 0 ? null : a, rng.Next(4) == 0 ? null : b);
                }
                else if (dice < 977 && rng.Next(4) == 0)
                {
                    snapshots.ReleaseAll();
                    compactions += db.Counters.Compactions;
                    db.Dispose();
                    db = KvDb.Open(path, options);
                    CheckScan(db, model, null, where + " after reopen");
                }
                for (int level = 1; level < KvEngine.Versions.Version.NumLevels; level++)
                {
                    if (db.Impl.Versions.Current.NumFiles(level) > 0)
                    {
                        maxDepth = Math.Max(maxDepth, level);
                    }
                }
            }
            CheckScan(db, model, null, $"seed {seed} final");
            foreach ((Snapshot s, SortedDictionary<byte[], byte[]> state) in snapshots.Held)
            {
                CheckScan(db, state, s, $"seed {seed} final snapshot");
            }
            CompactionTestUtil.WaitForCompactions(db); // writes may outrun compaction on a loaded machine
            compactions += db.Counters.Compactions;
            Assert.True(compactions > 20, $"only {compactions} compactions ran");
            Assert.True(maxDepth >= 2, $"the tree never grew below level {maxDepth}");
        }
        finally
        {
            snapshots.ReleaseAll();
            db.Dispose();
        }
        using (KvDb again = KvDb.Open(path, options))
        {
            CheckScan(again, model, null, $"seed {seed} after final reopen");
        }
    }

    internal static void CheckScan(KvDb db, SortedDictionary<byte[], byte[]> model, Snapshot? snap, string where)
    {
        using KvIterator it = db.NewIterator(new ReadOptions { Snapshot = snap });
        it.SeekToFirst();
        foreach (KeyValuePair<byte[], byte[]> e in model)
        {
            Assert.True(it.Valid, $"{where}: iterator ended before {Convert.ToHexString(e.Key)}");
            Assert.True(e.Key.AsSpan().SequenceEqual(it.Key), $"{where}: key {Convert.ToHexString(it.Key)}, model {Convert.ToHexString(e.Key)}");
            Assert.True(e.Value.AsSpan().SequenceEqual(it.Value), $"{where}: value differs for {Convert.ToHexString(e.Key)}");
            it.Next();
        }
        Assert.False(it.Valid, $"{where}: iterator has extra entries");
    }

    private static byte[] RandomKey(Random rng)
    {
        int id = rng.Next(3000);
        return System.Text.Encoding.ASCII.GetBytes($"key{id * 7919 % 3000:D5}");
    }

    private static byte[] RandomValue(Random rng)
    {
        var v = new byte[rng.Next(10, 200)];
        rng.NextBytes(v);
        return v;
    }

    private static bool Same(byte[]? a, byte[]? b) => a == null ? b == null : b != null && a.AsSpan().SequenceEqual(b);
}
