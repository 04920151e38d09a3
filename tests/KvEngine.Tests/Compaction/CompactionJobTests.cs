using KvEngine.Storage;

using static KvEngine.Tests.Compaction.CompactionTestUtil;
using ValueType = KvEngine.Format.ValueType;
using KvEngine.Versions;

namespace KvEngine.Tests.Compaction;

/// <summary>What a compaction keeps and drops, observed in the tables it writes.</summary>
public sealed class CompactionJobTests
{
    private readonly FaultInjectionFileSystem _fs = new();

    public CompactionJobTests()
    {
        _fs.CreateDirectory("/c");
    }

    private KvDb Open(bool auto = false) => KvDb.Open("/c/db", Tiny(_fs, auto));

    [Fact]
    public void ShadowedVersionsAreDropped()
    {
        using KvDb db = Open();
        db.Put(K("k"), K("v1"));
        db.Flush();
        db.Put(K("k"), K("v2"));
        db.Put(K("j"), K("x"));
        db.Flush();
        Assert.Equal(2, Files(db, 0));
        db.CompactRange(null, null);
        Assert.Equal(0, Files(db, 0));
        var entries = Entries(db, _fs, 1);
        // Level 1 is the bottom and no snapshot exists: the survivors' sequence numbers are zeroed.
        Assert.Equal(new[] { ("j", 0UL, ValueType.Value), ("k", 0UL, ValueType.Value) }, entries);
        Assert.Equal(K("v2"), db.Get(K("k")));
    }

    [Fact]
    public void SequenceNumbersAreZeroedOnlyAtTheBottomAndBelowTheEarliestSnapshot()
    {
        using KvDb db = Open();
        for (int i = 0; i < 5; i++)
        {
            db.Put(K("k" + i), K("v" + i)); // seqs 1..5
        }
        db.Flush();
        db.Put(K("k9"), K("v9"));        // seq 6: a second level-0 file, so level 0 -> 1 merges
        db.Flush();
        db.Impl.CompactLevel(0, 1, null, null);
        Assert.All(Entries(db, _fs, 1), e => Assert.Equal(0UL, e.Seq)); // level 1 is the bottom
        db.Impl.CompactLevel(1, 2, null, null); // a trivial move keeps them

        db.Put(K("k1"), K("w1"));        // seq 7
        db.Flush();
        Snapshot s = db.GetSnapshot();   // sees seq 7
        db.Put(K("k2"), K("w2"));        // seq 8, newer than the snapshot
        db.Flush();
        db.Impl.CompactLevel(0, 1, null, null);
        // Level 2 lies below level 1: nothing is zeroed there.
        Assert.Equal(new[] { ("k1", 7UL, ValueType.Value), ("k2", 8UL, ValueType.Value) }, Entries(db, _fs, 1));

        db.Impl.CompactLevel(1, 2, null, null);
        var bottom = Entries(db, _fs, 2);
        Assert.Contains(("k1", 0UL, ValueType.Value), bottom); // the snapshot sees it: zeroed
        Assert.Contains(("k2", 8UL, ValueType.Value), bottom); // newer than the snapshot: kept
        Assert.Contains(("k2", 0UL, ValueType.Value), bottom); // the snapshot's k2 (already 0)
        Assert.Equal(7, bottom.Count); // k0, k1 (w1 shadows v1), k2 twice (two stripes), k3, k4, k9
        Assert.Equal(K("w1"), db.Get(K("k1"), new ReadOptions { Snapshot = s }));
        Assert.Equal(K("v2"), db.Get(K("k2"), new ReadOptions { Snapshot = s }));
        Assert.Equal(K("w2"), db.Get(K("k2")));
        s.Dispose();
    }

    [Fact]
    public void SnapshotsKeepTheVersionsTheySee()
    {
        using KvDb db = Open();
        db.Put(K("k"), K("v1"));          // seq 1
        Snapshot s1 = db.GetSnapshot();   // sees v1
        db.Put(K("k"), K("v2"));          // seq 2, hidden from s1; shadowed by v3 in the same stripe
        db.Put(K("k"), K("v3"));          // seq 3
        Snapshot s3 = db.GetSnapshot();   // sees v3
        db.Delete(K("k"));                // seq 4
        db.Flush();
        db.Put(K("a"), K("x"));
        db.Put(K("z"), K("x"));
        db.Flush();
        db.CompactRange(null, null);
        var keys = Entries(db, _fs, 1).FindAll(e => e.Key == "k");
        // k@1 is seen by the earliest snapshot and nothing lies below level 1: its sequence becomes 0.
        Assert.Equal(new[] { ("k", 4UL, ValueType.Deletion), ("k", 3UL, ValueType.Value), ("k", 0UL, ValueType.Value) }, keys);
        Assert.Equal(K("v1"), db.Get(K("k"), new ReadOptions { Snapshot = s1 }));
        Assert.Equal(K("v3"), db.Get(K("k"), new ReadOptions { Snapshot = s3 }));
        Assert.Null(db.Get(K("k")));

        // Without snapshots the next compaction of the range drops everything of "k".
        s1.Dispose();
        s3.Dispose();
        db.Put(K("b"), K("x"));
        db.Put(K("y"), K("x"));
        db.Flush();
        db.CompactRange(null, null);
        Assert.DoesNotContain(Entries(db, _fs, 1), e => e.Key == "k");
        Assert.Null(db.Get(K("k")));
    }

    [Fact]
    public void DeletionsAreDroppedOnlyAtTheBottom()
    {
        using KvDb db = Open();
        for (int i = 0; i < 10; i++)
        {
            db.Put(K("k" + i), K("old" + i));
        }
        db.Flush();
        db.Impl.CompactLevel(0, 1, null, null);
        db.Impl.CompactLevel(1, 2, null, null);
        Assert.Equal(10, Entries(db, _fs, 2).Count);

        db.Delete(K("k3"));
        db.Put(K("k0"), K("new0"));
        db.Put(K("k9"), K("new9"));
        db.Flush();
        db.Impl.CompactLevel(0, 1, null, null);
        var level1 = Entries(db, _fs, 1);
        Assert.Contains(("k3", 11UL, ValueType.Deletion), level1); // level 2 still holds k3
        Assert.Null(db.Get(K("k3")));

        db.Impl.CompactLevel(1, 2, null, null);
        Assert.Equal(0, Files(db, 1));
        var level2 = Entries(db, _fs, 2);
        Assert.DoesNotContain(level2, e => e.Key == "k3");
        Assert.Equal(9, level2.Count);
        Assert.Null(db.Get(K("k3")));
        Assert.Equal(K("new0"), db.Get(K("k0")));
        Assert.Equal(K("old5"), db.Get(K("k5")));
    }

    [Fact]
    public void SingleFileWithNoOverlapMovesTrivially()
    {
        using KvDb db = Open();
        db.Put(K("a"), K("1"));
        db.Put(K("b"), K("2"));
        db.Flush();
        ulong number = db.Impl.Versions.Current.Files(0)[0].Number;
        db.Impl.CompactLevel(0, 1, null, null);
        Assert.Equal(number, db.Impl.Versions.Current.Files(1)[0].Number);
        Assert.Equal(1, db.Counters.TrivialMoves);
        Assert.Equal(0, db.Counters.CompactWriteBytes);

        // An overlapping file in the next level forces a real merge.
        db.Put(K("a"), K("3"));
        db.Flush();
        db.Impl.CompactLevel(0, 1, null, null);
        Assert.Equal(1, db.Counters.TrivialMoves);
        Assert.True(db.Counters.CompactWriteBytes > 0);
        Assert.NotEqual(number, db.Impl.Versions.Current.Files(1)[0].Number);
        Assert.Equal(K("3"), db.Get(K("a")));
        Assert.False(_fs.FileExists(KvEngine.Versions.FileNames.TableFile(db.Path, number)), "the merged input was not deleted");
    }

    [Fact]
    public void CompactRangeLimitedToARangeLeavesOtherFilesAlone()
    {
        using KvDb db = Open();
        db.Put(K("a"), K("1"));
        db.Flush();
        db.Put(K("m"), K("2"));
        db.Flush();
        db.CompactRange(K("l"), K("n"));
        Assert.Equal(1, Files(db, 0));
        Assert.Equal(1, Files(db, 1));
        Assert.Equal(K("1"), db.Get(K("a")));
        Assert.Equal(K("2"), db.Get(K("m")));
    }
}
