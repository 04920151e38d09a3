using KvEngine.Storage;

namespace KvEngine.Tests.Db;

/// <summary>
/// Random histories of puts, deletes and batches, some Sync and some not, with small memtables so
/// that memtable switches and background flushes happen, ended by a simulated power loss or
/// process crash. After each reopen the database must hold exactly the state after a prefix of the
/// history: at least everything up to the last acknowledged Sync write or completed Flush (for a
/// process crash: every acknowledged write), no holes, nothing that was never written.
/// </summary>
public sealed class PowerLossTests
{
    private static readonly WriteOptions s_sync = new() { Sync = true };
    private static readonly WriteOptions s_noSync = new();

    public static TheoryData<int> Seeds() => new() { 1, 2, 3, 4, 5, 6 };

    [Theory]
    [MemberData(nameof(Seeds))]
    public void PowerLossBetweenWritesKeepsTheSyncedPrefix(int seed) => RunBetweenWrites(seed, powerLoss: true);

    [Theory]
    [InlineData(21)]
    [InlineData(22)]
    public void ProcessCrashBetweenWritesKeepsEveryAcknowledgedWrite(int seed) => RunBetweenWrites(seed, powerLoss: false);

    [Theory]
    [MemberData(nameof(Seeds))]
    public void PowerLossAtRandomMomentsKeepsTheSyncedPrefix(int seed) => RunConcurrent(seed + 100, powerLoss: true);

    [Theory]
    [InlineData(121)]
    [InlineData(122)]
    public void ProcessCrashAtRandomMomentsKeepsEveryAcknowledgedWrite(int seed) => RunConcurrent(seed, powerLoss: false);

    /// <summary>The crash comes between two calls of one writer thread; some cycles end right after
    /// a Flush, some right after a Sync write while a flush is still running.</summary>
    private static void RunBetweenWrites(int seed, bool powerLoss)
    {
        var rng = new Random(seed);
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        KvOptions options = DbTestUtil.SmallOptions(fs, 16 << 10, rng.Next(2, 4));
        IReadOnlyDictionary<string, string> state = new Dictionary<string, string>(StringComparer.Ordinal);
        KvDb db = KvDb.Open(DbTestUtil.DbPath, options);
        try
        {
            int duringFlush = 0;
            for (int cycle = 0; cycle < 30; cycle++)
            {
                var history = new WriteHistory(rng, 400, $"s{seed}c{cycle}");
                int durable = 0;
                int target = rng.Next(20, 600);
                string ending = "after a write";
                while (history.Count < target)
                {
                    int r = rng.Next(100);
                    if (r < 3)
                    {
                        db.Flush();
                        durable = history.Count;
                        if (rng.Next(3) == 0)
                        {
                            ending = "right after Flush";
                            break;
                        }
                        continue;
                    }
                    bool sync = r < 20;
                    WriteHistory.Apply(db, history.Next(), sync ? s_sync : s_noSync);
                    if (sync || !powerLoss)
                    {
                        durable = history.Count;
                    }
                    if (sync && db.GetProperty("rocksdb.num-immutable-mem-table") != "0" && rng.Next(2) == 0)
                    {
                        ending = "after a Sync write during a background flush";
                        duringFlush++;
                        break;
                    }
                }
                DbTestUtil.Abandon(fs, db, powerLoss);
                if (powerLoss && rng.Next(3) == 0)
                {
                    ending += TearNewestLog(fs, rng);
                }
                db = KvDb.Open(DbTestUtil.DbPath, options);
                state = CheckReopened(db, history, state, durable, history.Count, rng, $"seed {seed} cycle {cycle} ({ending})");
            }
            // The scenarios above happened: tables were written, and crashes hit running flushes.
            Assert.NotEqual(0, DbTestUtil.TotalTableFiles(db));
            Assert.True(duringFlush > 0 || !powerLoss, "no cycle ended during a background flush");
        }
        finally
        {
            db.Dispose();
        }
    }

    /// <summary>A writer thread runs while the test thread crashes the file system at a random moment.</summary>
    private static void RunConcurrent(int seed, bool powerLoss)
    {
        var rng = new Random(seed);
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        KvOptions options = DbTestUtil.SmallOptions(fs, 16 << 10, rng.Next(2, 4));
        IReadOnlyDictionary<string, string> state = new Dictionary<string, string>(StringComparer.Ordinal);
        KvDb db = KvDb.Open(DbTestUtil.DbPath, options);
        try
        {
            for (int cycle = 0; cycle < 6; cycle++)
            {
                var writer = new CrashWriter(db, new WriteHistory(new Random(rng.Next()), 400, $"s{seed}c{cycle}"), rng.Next(), powerLoss);
                var thread = new Thread(writer.Run) { IsBackground = true, Name = "power-loss writer" };
                thread.Start();
                Thread.Sleep(rng.Next(1, 40));
                int durable = writer.Durable;
                DbTestUtil.Abandon(fs, db, powerLoss, () =>
                    Assert.True(thread.Join(TimeSpan.FromSeconds(20)), "the writer hung after the crash"));
                if (writer.Unexpected != null)
                {
                    throw new InvalidOperationException($"seed {seed} cycle {cycle}: unexpected exception from the writer", writer.Unexpected);
                }
                db = KvDb.Open(DbTestUtil.DbPath, options);
                state = CheckReopened(db, writer.History, state, durable, writer.History.Count, rng,
                    $"seed {seed} cycle {cycle} (crash after {writer.History.Count} writes)");
            }
        }
        finally
        {
            db.Dispose();
        }
    }

    /// <summary>
    /// A real power loss may leave the unsynced end of a file as garbage or zeros (preallocated
    /// space) rather than cut cleanly: append some to the newest WAL. Recovery must still stop
    /// there (point-in-time recovery, the default) and give a prefix.
    /// </summary>
    private static string TearNewestLog(FaultInjectionFileSystem fs, Random rng)
    {
        List<string> logs = DbTestUtil.ListFiles(fs, DbTestUtil.DbPath).Logs;
        string path = Path.Combine(DbTestUtil.DbPath, logs[^1]);
        byte[] bytes = fs.ReadAllBytes(path);
        var tail = new byte[rng.Next(1, 300)];
        bool zeros = rng.Next(2) == 0;
        if (!zeros)
        {
            rng.NextBytes(tail);
        }
        fs.WriteAllBytes(path, [.. bytes, .. tail]);
        return $", {tail.Length} {(zeros ? "zero" : "garbage")} bytes after {logs[^1]}";
    }

    private static IReadOnlyDictionary<string, string> CheckReopened(KvDb db, WriteHistory history, IReadOnlyDictionary<string, string> start,
        int lo, int hi, Random rng, string context)
    {
        SortedDictionary<string, string> actual = DbTestUtil.ReadAll(db);
        history.AssertPrefix(start, actual, lo, hi, context);
        // Point reads agree with the scan.
        for (int i = 0; i < 60; i++)
        {
            string key = "key" + rng.Next(400).ToString("D5", System.Globalization.CultureInfo.InvariantCulture);
            byte[]? v = db.Get(DbTestUtil.B(key));
            actual.TryGetValue(key, out string? expected);
            Assert.True(expected == (v == null ? null : DbTestUtil.S(v)), $"{context}: Get({key}) disagrees with the scan");
        }
        return actual;
    }

    /// <summary>One writer thread's loop: writes until the database fails under it.</summary>
    private sealed class CrashWriter
    {
        private readonly KvDb _db;
        private readonly Random _rng;
        private readonly bool _powerLoss;
        private int _durable;

        public CrashWriter(KvDb db, WriteHistory history, int seed, bool powerLoss)
        {
            _db = db;
            History = history;
            _rng = new Random(seed);
            _powerLoss = powerLoss;
        }

        public WriteHistory History { get; }

        /// <summary>Writes before this index are acknowledged durable (Sync, Flush, or any write for a process crash).</summary>
        public int Durable => Volatile.Read(ref _durable);

        public Exception? Unexpected { get; private set; }

        public void Run()
        {
            try
            {
                while (History.Count < 20_000)
                {
                    int r = _rng.Next(100);
                    if (r < 2)
                    {
                        int before = History.Count;
                        _db.Flush();
                        Volatile.Write(ref _durable, before);
                        continue;
                    }
                    bool sync = r < 15;
                    WriteHistory.Apply(_db, History.Next(), sync ? s_sync : s_noSync);
                    if (sync || !_powerLoss)
                    {
                        Volatile.Write(ref _durable, History.Count);
                    }
                }
            }
            catch (KvException)
            {
                // The crash: the instance refuses writes from now on.
            }
            catch (Exception e)
            {
                Unexpected = e;
            }
        }
    }
}
