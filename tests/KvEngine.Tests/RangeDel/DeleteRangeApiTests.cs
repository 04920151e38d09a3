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
