using KvEngine.Storage;
using KvEngine.Tests.Db;

namespace KvEngine.Tests.RangeDel;

/// <summary>The public DeleteRange API: argument rules, visibility by sequence, snapshots, recovery.</summary>
public sealed class DeleteRangeApiTests
{
    private static KvDb OpenMem(out FaultInjectionFileSystem fs, long writeBufferSize = 64 << 10)
    {
        fs = DbTestUtil.NewFs();
        return KvDb.Open("/db", DbTestUtil.SmallOptions(fs, writeBufferSize));
    }

    [Fact]
    public void BeginAfterEndIsArgumentException()
    {
        using KvDb db = OpenMem(out _);
        Assert.Throws<ArgumentException>(() => db.DeleteRange("b"u8, "a"u8));
        Assert.Throws<ArgumentException>(() => { _ = db.DeleteRangeAsync("b"u8.ToArray(), "a"u8.ToArray()); });
        using var batch = new WriteBatch();
        Assert.Throws<ArgumentException>(() => batch.DeleteRange("b"u8, "a"u8));
        Assert.Equal(0, batch.Count);
    }

    [Fact]
    public void DeleteRangeAfterDisposeThrowsObjectDisposed()
    {
        KvDb db = OpenMem(out _);
        db.Dispose();
        Assert.Throws<ObjectDisposedException>(() => db.DeleteRange("a"u8, "b"u8));
        Assert.Throws<ObjectDisposedException>(() => db.DeleteRange("a"u8, "a"u8));
        Assert.Throws<ObjectDisposedException>(() => { _ = db.DeleteRangeAsync("a"u8.ToArray(), "a"u8.ToArray()); });
    }

    [Fact]
    public async Task EmptyRangeIsANoOp()
    {
        using KvDb db = OpenMem(out _);
        db.Put("a"u8, "1"u8);
        ulong before = db.LatestSequenceNumber;
        db.DeleteRange("a"u8, "a"u8);
        await db.DeleteRangeAsync("a"u8.ToArray(), "a"u8.ToArray());
        Assert.Equal(before, db.LatestSequenceNumber);
        Assert.Equal("1"u8.ToArray(), db.Get("a"u8));
        using var batch = new WriteBatch();
        batch.DeleteRange("a"u8, "a"u8);
        Assert.Equal(0, batch.Count);
    }

    [Fact]
    public void DeletesHalfOpenRangeAndOnlyOlderEntries()
    {
        using KvDb db = OpenMem(out _);
        foreach (string k in new[] { "a", "b", "ba", "c", "d" })
        {
            db.Put(DbTestUtil.B(k), DbTestUtil.B("v" + k));
        }
        using Snapshot before = db.GetSnapshot();
        db.DeleteRange("b"u8, "d"u8);
        db.Put("c"u8, "new"u8);
        Assert.Equal(new SortedDictionary<string, string> { ["a"] = "va", ["c"] = "new", ["d"] = "vd" }, DbTestUtil.ReadAll(db));
        Assert.Equal(5, DbTestUtil.ReadAll(db, new ReadOptions { Snapshot = before }).Count);
        Assert.Equal("vb"u8.ToArray(), db.Get("b"u8, new ReadOptions { Snapshot = before }));
        Assert.Null(db.Get("b"u8));
        Assert.Null(db.Get("ba"u8));
        Assert.Equal("new"u8.ToArray(), db.Get("c"u8));
        Assert.Equal("vd"u8.ToArray(), db.Get("d"u8));
    }

    [Fact]
    public async Task ConcurrentWritersWithRangeDeletionsEndInTheModelState()
    {
        // Each thread owns a key prefix and its own order, so the end state is fixed whatever the
        // interleaving, while groups of writers insert into the memtable concurrently and readers
        // rebuild the tombstone list between DeleteRanges.
        using KvDb db = OpenMem(out _, writeBufferSize: 32 << 10);
        const int Threads = 4;
        const int Ops = 600;
        var models = new SortedDictionary<string, string>[Threads];
        var tasks = new Task[Threads];
        for (int t = 0; t < Threads; t++)
        {
            int id = t;
            models[id] = new SortedDictionary<string, string>(StringComparer.Ordinal);
            tasks[id] = Task.Run(() =>
            {
                SortedDictionary<string, string> model = models[id];
                for (int i = 0; i < Ops; i++)
                {
                    string key = $"t{id}-{i % 97:D3}";
                    db.Put(DbTestUtil.B(key), DbTestUtil.B($"v{i}"));
                    model[key] = $"v{i}";
                    if (i % 7 == 0)
                    {
                        string begin = $"t{id}-{i % 89:D3}";
                        string end = $"t{id}-{i % 89 + 9:D3}";
                        db.DeleteRange(DbTestUtil.B(begin), DbTestUtil.B(end));
                        foreach (string k in model.Keys.Where(k => string.CompareOrdinal(k, begin) >= 0 && string.CompareOrdinal(k, end) < 0).ToList())
                        {
                            model.Remove(k);
                        }
                    }
                    if (i % 50 == 0)
                    {
                        _ = db.Get(DbTestUtil.B(key)); // a reader between DeleteRanges
                    }
                }
            });
        }
        await Task.WhenAll(tasks);
        var expected = new SortedDictionary<string, string>(StringComparer.Ordinal);
        foreach (SortedDictionary<string, string> m in models)
        {
            foreach (KeyValuePair<string, string> e in m)
            {
                expected[e.Key] = e.Value;
            }
        }
        Assert.Equal(expected, DbTestUtil.ReadAll(db));
        foreach (KeyValuePair<string, string> e in expected)
        {
            Assert.Equal(e.Value, DbTestUtil.S(db.Get(DbTestUtil.B(e.Key))));
        }
    }

    [Fact]
    public void RangeFromTheEmptyKeyDeletesEverythingBelowItsEnd()
    {
        KvDb db = OpenMem(out FaultInjectionFileSystem fs);
        try
        {
            db.Put([], "empty"u8);
            db.Put([0x00], "zero"u8);
            db.Put("m"u8, "m"u8);
            db.Put([0xFF], "ff"u8);
            db.Put([0xFF, 0x00], "ff00"u8);
            db.Flush();
            db.DeleteRange([], [0xFF]);
            db.Flush();
            db.CompactRange(null, null);
            Assert.Null(db.Get([]));
            Assert.Null(db.Get("m"u8));
            Assert.Equal("ff"u8.ToArray(), db.Get([0xFF]));
            db.Dispose();
            db = KvDb.Open("/db", DbTestUtil.SmallOptions(fs));
            using KvIterator it = db.NewIterator();
            var keys = new List<string>();
            for (it.SeekToLast(); it.Valid; it.Prev())
            {
                keys.Add(Convert.ToHexString(it.Key));
            }
            Assert.Equal(["FF00", "FF"], keys);
        }
        finally
        {
            db.Dispose();
        }
    }

    [Theory]
    [InlineData(false, false)]
    [InlineData(true, false)]
    [InlineData(true, true)]
    public void SurvivesFlushAndReopen(bool flush, bool reopen)
    {
        KvDb db = OpenMem(out FaultInjectionFileSystem fs);
        try
        {
            for (int i = 0; i < 100; i++)
            {
                db.Put(DbTestUtil.B($"k{i:D3}"), DbTestUtil.B($"v{i}"));
            }
            if (flush)
            {
                db.Flush();
            }
            db.DeleteRange(DbTestUtil.B("k010"), DbTestUtil.B("k090"));
            if (flush)
            {
                db.Flush();
            }
            if (reopen)
            {
                db.Dispose();
                db = KvDb.Open("/db", DbTestUtil.SmallOptions(fs));
            }
            SortedDictionary<string, string> all = DbTestUtil.ReadAll(db);
            Assert.Equal(20, all.Count);
            Assert.Null(db.Get(DbTestUtil.B("k050")));
            Assert.NotNull(db.Get(DbTestUtil.B("k090")));
            Assert.NotNull(db.Get(DbTestUtil.B("k009")));
        }
        finally
        {
            db.Dispose();
        }
    }
}
