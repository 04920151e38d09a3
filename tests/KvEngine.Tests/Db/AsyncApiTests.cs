using System.Globalization;
using KvEngine.Storage;

namespace KvEngine.Tests.Db;

/// <summary>
/// The asynchronous API: each call's effect, group commit under many concurrent writers mixing
/// synchronous and asynchronous calls and Sync flags (every acknowledged write survives a process
/// crash), cancellation before the call, and ScanAsync ranges.
/// </summary>
public sealed class AsyncApiTests
{
    [Fact]
    public async Task EachAsyncCallDoesWhatItsSynchronousTwinDoes()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        await using KvDb db = await KvDb.OpenAsync(DbTestUtil.DbPath, new KvOptions { FileSystem = fs });
        await db.PutAsync(DbTestUtil.B("a"), DbTestUtil.B("1"));
        await db.PutAsync(DbTestUtil.B("b"), DbTestUtil.B("2"), new WriteOptions { Sync = true });
        Assert.Equal(DbTestUtil.B("1"), await db.GetAsync(DbTestUtil.B("a")));
        await db.DeleteAsync(DbTestUtil.B("a"));
        Assert.Null(await db.GetAsync(DbTestUtil.B("a")));
        Assert.Null(await db.GetAsync(DbTestUtil.B("never")));

        using (var batch = new WriteBatch())
        {
            batch.Put(DbTestUtil.B("c"), DbTestUtil.B("3"));
            batch.Delete(DbTestUtil.B("b"));
            batch.Put(DbTestUtil.B("d"), DbTestUtil.B("4"));
            await db.WriteAsync(batch);
        }
        using Snapshot before = db.GetSnapshot();
        await db.PutAsync(DbTestUtil.B("c"), DbTestUtil.B("33"));
        Assert.Equal(DbTestUtil.B("3"), await db.GetAsync(DbTestUtil.B("c"), new ReadOptions { Snapshot = before }));
        Assert.Equal(DbTestUtil.B("33"), await db.GetAsync(DbTestUtil.B("c")));

        Assert.Equal("0", db.GetProperty("rocksdb.num-files-at-level0"));
        await db.FlushAsync();
        Assert.Equal("1", db.GetProperty("rocksdb.num-files-at-level0"));
        Assert.Equal("0", db.GetProperty("rocksdb.num-immutable-mem-table"));
        Assert.Equal(DbTestUtil.B("33"), await db.GetAsync(DbTestUtil.B("c")));
        Assert.Null(await db.GetAsync(DbTestUtil.B("b")));
        Assert.Equal(
            new SortedDictionary<string, string>(StringComparer.Ordinal) { ["c"] = "33", ["d"] = "4" },
            DbTestUtil.ReadAll(db));
        // An empty memtable flushes to nothing.
        await db.FlushAsync();
        Assert.Equal("1", db.GetProperty("rocksdb.num-files-at-level0"));
    }

    /// <summary>8 tasks x 2000 writes, sync and async calls, some Sync: all there, also after a crash.</summary>
    [Fact]
    public async Task ConcurrentWritersAreAllCommitted()
    {
        const int Tasks = 8;
        const int PerTask = 2000;
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        KvOptions o = DbTestUtil.SmallOptions(fs, 64 << 10, 3);
        KvDb db = KvDb.Open(DbTestUtil.DbPath, o);
        var expected = new SortedDictionary<string, string>[Tasks];
        var workers = new Task<int>[Tasks];
        for (int t = 0; t < Tasks; t++)
        {
            int task = t;
            expected[t] = new SortedDictionary<string, string>(StringComparer.Ordinal);
            workers[t] = Task.Run(() => WriterAsync(db, task, PerTask, expected[task]));
        }
        Task<int[]> all = Task.WhenAll(workers);
        Assert.Same(all, await Task.WhenAny(all, Task.Delay(TimeSpan.FromSeconds(60))));
        int records = (await all).Sum();

        var model = new SortedDictionary<string, string>(StringComparer.Ordinal);
        foreach (SortedDictionary<string, string> part in expected)
        {
            foreach (KeyValuePair<string, string> e in part)
            {
                model.Add(e.Key, e.Value);
            }
        }
        Assert.Equal(model, DbTestUtil.ReadAll(db));
        // Each record was committed exactly once: one sequence number each.
        Assert.Equal((ulong)records, db.LatestSequenceNumber);

        // Every acknowledged write was handed to the OS: a process crash loses none.
        DbTestUtil.Abandon(fs, db, powerLoss: false);
        db = KvDb.Open(DbTestUtil.DbPath, o);
        Assert.Equal(model, DbTestUtil.ReadAll(db));
        db.Dispose();
        db = KvDb.Open(DbTestUtil.DbPath, o);
        Assert.Equal(model, DbTestUtil.ReadAll(db));
        foreach (KeyValuePair<string, string> e in model)
        {
            Assert.Equal(e.Value, DbTestUtil.S(db.Get(DbTestUtil.B(e.Key))));
        }
        db.Dispose();
    }

    /// <summary>
    /// Only asynchronous writers, so leadership is handed from thread to thread constantly: each
    /// write must be committed exactly once (one sequence number per record, no more).
    /// </summary>
    [Fact]
    public async Task AsyncWritersAreCommittedExactlyOnce()
    {
        const int Tasks = 16;
        const int PerTask = 3000;
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        await using KvDb db = KvDb.Open(DbTestUtil.DbPath, DbTestUtil.SmallOptions(fs, 256 << 10, 3));
        var workers = new Task[Tasks];
        for (int t = 0; t < Tasks; t++)
        {
            int task = t;
            workers[t] = Task.Run(async () =>
            {
                for (int i = 0; i < PerTask; i++)
                {
                    await db.PutAsync(DbTestUtil.B($"x{task:D2}-{i:D5}"), DbTestUtil.B("v"));
                }
            });
        }
        Task all = Task.WhenAll(workers);
        Assert.Same(all, await Task.WhenAny(all, Task.Delay(TimeSpan.FromSeconds(60))));
        await all;
        Assert.Equal((ulong)(Tasks * PerTask), db.LatestSequenceNumber);
        Assert.Equal(Tasks * PerTask, DbTestUtil.ReadAll(db).Count);
    }

    [Fact]
    public async Task CanceledTokenCancelsBeforeTheCall()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        using var cts = new CancellationTokenSource();
        cts.Cancel();
        CancellationToken token = cts.Token;
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() =>
            KvDb.OpenAsync(DbTestUtil.DbPath, new KvOptions { FileSystem = fs }, token).AsTask());
        Assert.False(fs.DirectoryExists(DbTestUtil.DbPath), "a canceled open created the database");

        await using KvDb db = await KvDb.OpenAsync(DbTestUtil.DbPath, new KvOptions { FileSystem = fs });
        db.Put(DbTestUtil.B("kept"), DbTestUtil.B("1"));
        ulong sequence = db.LatestSequenceNumber;
        using var batch = new WriteBatch();
        batch.Put(DbTestUtil.B("batch"), DbTestUtil.B("x"));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => db.PutAsync(DbTestUtil.B("p"), DbTestUtil.B("x"), null, token).AsTask());
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => db.DeleteAsync(DbTestUtil.B("kept"), null, token).AsTask());
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => db.WriteAsync(batch, null, token).AsTask());
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => db.GetAsync(DbTestUtil.B("kept"), null, token).AsTask());
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => db.FlushAsync(token).AsTask());
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () =>
        {
            await foreach (KeyValuePair<byte[], byte[]> _ in db.ScanAsync(default, default, null, token))
            {
            }
        });
        // Nothing happened.
        Assert.Equal(sequence, db.LatestSequenceNumber);
        Assert.Equal(new SortedDictionary<string, string>(StringComparer.Ordinal) { ["kept"] = "1" }, DbTestUtil.ReadAll(db));
        Assert.Equal("0", db.GetProperty("rocksdb.num-files-at-level0"));
    }

    [Fact]
    public async Task ScanAsyncReturnsExactlyTheRange()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        await using KvDb db = KvDb.Open(DbTestUtil.DbPath, DbTestUtil.SmallOptions(fs));
        for (int i = 0; i < 3000; i++)
        {
            db.Put(Key(i), DbTestUtil.B("v" + i.ToString(CultureInfo.InvariantCulture)));
        }
        db.Flush();
        for (int i = 0; i < 3000; i += 10)
        {
            db.Delete(Key(i));
        }
        using Snapshot snap = db.GetSnapshot();
        for (int i = 0; i < 3000; i += 7)
        {
            db.Put(Key(i), DbTestUtil.B("new"));
        }

        await AssertScan(db, Key(100), Key(200), null, 100, 200);
        await AssertScan(db, Key(2990), default, null, 2990, 3000);
        await AssertScan(db, default, default, null, 0, 3000);
        await AssertScan(db, DbTestUtil.B("k000100x"), Key(102), null, 101, 102);
        await AssertScan(db, Key(200), Key(100), null, 0, 0);
        await AssertScan(db, Key(5), Key(5), null, 0, 0);
        await AssertScan(db, DbTestUtil.B("l"), default, null, 0, 0);
        await AssertScan(db, Key(500), Key(2500), new ReadOptions { Snapshot = snap }, 500, 2500);
    }

    /// <summary>Checks ScanAsync(from, to) against the generated contents for keys [lo, hi).</summary>
    private static async Task AssertScan(KvDb db, ReadOnlyMemory<byte> from, ReadOnlyMemory<byte> to, ReadOptions? ro, int lo, int hi)
    {
        var got = new List<KeyValuePair<byte[], byte[]>>();
        await foreach (KeyValuePair<byte[], byte[]> e in db.ScanAsync(from, to, ro))
        {
            got.Add(e);
        }
        bool atSnapshot = ro?.Snapshot != null;
        int n = 0;
        for (int i = lo; i < hi; i++)
        {
            bool latestNew = !atSnapshot && i % 7 == 0;
            if (i % 10 == 0 && !latestNew)
            {
                continue;
            }
            Assert.True(n < got.Count, $"scan [{lo}, {hi}) ended early at {i}");
            Assert.Equal(Key(i), got[n].Key);
            Assert.Equal(latestNew ? "new" : "v" + i.ToString(CultureInfo.InvariantCulture), DbTestUtil.S(got[n].Value));
            n++;
        }
        Assert.Equal(n, got.Count);
    }

    private static byte[] Key(int i) => DbTestUtil.B("k" + i.ToString("D6", CultureInfo.InvariantCulture));

    /// <summary>Writes <paramref name="count"/> operations; returns the number of records (sequence numbers) they take.</summary>
    private static async Task<int> WriterAsync(KvDb db, int task, int count, SortedDictionary<string, string> expected)
    {
        int records = 0;
        var rng = new Random(task);
        var sync = new WriteOptions { Sync = true };
        for (int i = 0; i < count; i++)
        {
            string key = $"t{task}-{i:D5}";
            string value = $"{task}:{i}:" + new string('v', rng.Next(0, 100));
            WriteOptions? options = rng.Next(10) == 0 ? sync : null;
            switch (rng.Next(10))
            {
                case 0:
                case 1:
                    db.Put(DbTestUtil.B(key), DbTestUtil.B(value), options);
                    expected[key] = value;
                    records++;
                    break;
                case 2:
                    {
                        // A batch: this key and a delete of an earlier one.
                        using var batch = new WriteBatch();
                        batch.Put(DbTestUtil.B(key), DbTestUtil.B(value));
                        string old = $"t{task}-{rng.Next(i + 1):D5}";
                        batch.Delete(DbTestUtil.B(old));
                        await db.WriteAsync(batch, options);
                        expected[key] = value;
                        expected.Remove(old);
                        records += 2;
                        break;
                    }
                case 3 when i > 0:
                    {
                        string old = $"t{task}-{rng.Next(i):D5}";
                        await db.DeleteAsync(DbTestUtil.B(old), options);
                        expected.Remove(old);
                        await db.PutAsync(DbTestUtil.B(key), DbTestUtil.B(value), options);
                        expected[key] = value;
                        records += 2;
                        break;
                    }
                default:
                    await db.PutAsync(DbTestUtil.B(key), DbTestUtil.B(value), options);
                    expected[key] = value;
                    records++;
                    break;
            }
            if (i % 500 == 250)
            {
                // Own writes are visible at once.
                byte[]? got = await db.GetAsync(DbTestUtil.B(key));
                Assert.Equal(expected.GetValueOrDefault(key), got == null ? null : DbTestUtil.S(got));
            }
        }
        return records;
    }
}
