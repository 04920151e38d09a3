using static KvEngine.Tests.Db.DbTestUtil;

namespace KvEngine.Tests.Db;

/// <summary>
/// <see cref="KvIterator.Refresh"/> (RocksDB's Iterator::Refresh) and the reuse of disposed
/// iterators' trees by <see cref="KvDb.NewIterator"/>: a refreshed or reused iterator reads the
/// latest state — writes since, memtable switches, flushes, range deletions — and a reused tree
/// takes the new iterator's snapshot and bounds, never the old one's.
/// </summary>
public class IteratorRefreshTests
{
    private static List<string> Keys(KvIterator it)
    {
        var keys = new List<string>();
        for (it.SeekToFirst(); it.Valid; it.Next())
        {
            keys.Add(S(it.Key) + "=" + S(it.Value));
        }
        return keys;
    }

    [Fact]
    public void RefreshSeesWritesFlushesAndRangeDeletionsSinceCreation()
    {
        using KvDb db = KvDb.Open(DbPath, SmallOptions(NewFs()));
        db.Put(B("a"), B("1"));
        using KvIterator it = db.NewIterator();
        db.Put(B("b"), B("2"));
        Assert.Equal(["a=1"], Keys(it));
        it.Refresh(); // same memtable: the tree is reset in place
        Assert.False(it.Valid);
        Assert.Equal(["a=1", "b=2"], Keys(it));

        db.Flush();
        db.Put(B("c"), B("3"));
        db.Delete(B("a"));
        Assert.Equal(["a=1", "b=2"], Keys(it));
        it.Refresh(); // new read state: rebuilt
        Assert.Equal(["b=2", "c=3"], Keys(it));

        db.DeleteRange(B("b"), B("c"));
        Assert.Equal(["b=2", "c=3"], Keys(it));
        it.Refresh(); // same memtable, but its tombstones changed
        Assert.Equal(["c=3"], Keys(it));
    }

    [Fact]
    public void RefreshOfASnapshotIteratorIsNotSupportedAndOfADisposedOneThrows()
    {
        using KvDb db = KvDb.Open(DbPath, SmallOptions(NewFs()));
        db.Put(B("a"), B("1"));
        using Snapshot snap = db.GetSnapshot();
        using (KvIterator it = db.NewIterator(new ReadOptions { Snapshot = snap }))
        {
            Assert.Throws<KvNotSupportedException>(it.Refresh);
        }
        KvIterator disposed = db.NewIterator();
        disposed.Dispose();
        Assert.Throws<ObjectDisposedException>(disposed.Refresh);
    }

    [Fact]
    public void ReusedTreesTakeTheNewIteratorsSequenceSnapshotAndBounds()
    {
        using KvDb db = KvDb.Open(DbPath, SmallOptions(NewFs()));
        db.Put(B("a"), B("1"));
        db.Put(B("b"), B("2"));
        Snapshot snap = db.GetSnapshot();
        db.Put(B("c"), B("3"));
        db.Put(B("a"), B("4"));
        for (int round = 0; round < 3; round++) // later rounds take the spare trees earlier ones left
        {
            using (KvIterator all = db.NewIterator())
            {
                Assert.Equal(["a=4", "b=2", "c=3"], Keys(all));
            }
            using (KvIterator old = db.NewIterator(new ReadOptions { Snapshot = snap }))
            {
                Assert.Equal(["a=1", "b=2"], Keys(old));
            }
            using (KvIterator bounded = db.NewIterator(new ReadOptions { IterateLowerBound = B("b"), IterateUpperBound = B("c") }))
            {
                Assert.Equal(["b=2"], Keys(bounded));
            }
            using (KvIterator noFill = db.NewIterator(new ReadOptions { FillCache = false }))
            {
                Assert.Equal(["a=4", "b=2", "c=3"], Keys(noFill));
            }
            using (KvIterator latest = db.NewIterator())
            {
                Assert.Equal(["a=4", "b=2", "c=3"], Keys(latest));
            }
            db.Put(B("d"), B("x" + round)); // a reused tree sees writes made after its creation
            using (KvIterator reused = db.NewIterator())
            {
                Assert.Equal(["a=4", "b=2", "c=3", "d=x" + round], Keys(reused));
            }
            db.Delete(B("d"));
        }
        snap.Dispose();
    }

    [Fact]
    public void SparesDoNotKeepCompactedFilesAlive()
    {
        KvEngine.Storage.FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, SmallOptions(fs));
        for (int i = 0; i < 4; i++)
        {
            db.Put(B("k" + i), B("v" + i));
            db.Flush();
            using KvIterator it = db.NewIterator(); // disposed: its tree becomes a spare over this state
            it.SeekToFirst();
        }
        db.CompactRange(null, null);
        Assert.Equal(1, TotalTableFiles(db));
        // No spare pins the level-0 files the compaction replaced, so they go. The background
        // compaction the fourth flush started deletes them after it wakes CompactRange (which then
        // has nothing left to do and returns): wait for that sweep, not for a pin that never ends.
        var deadline = DateTime.UtcNow + TimeSpan.FromMinutes(1);
        int tables;
        while ((tables = fs.GetChildren(DbPath).Count(f => f.EndsWith(".sst", StringComparison.Ordinal))) != 1 && DateTime.UtcNow < deadline)
        {
            Thread.Sleep(10);
        }
        Assert.Equal(1, tables);
        Assert.Equal(4, ReadAll(db).Count);
    }
}
