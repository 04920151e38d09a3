using KvEngine.Db;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Versions;
using KvEngine.Storage;
using KvEngine.Table;

using static KvEngine.Tests.Db.DbTestUtil;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Db;

/// <summary>
/// A flush writes only what a reader can still see (DbImpl.Flush.cs, BuildTable): per user key the
/// newest version of each snapshot stripe, never dropping a deletion, and dropping points a newer
/// range tombstone of their stripe covers. Each test reads the flushed level-0 table entry by entry.
/// </summary>
public sealed class FlushDropTests
{
    // Large memtables: nothing flushes until the test asks.
    private static KvOptions Options(FaultInjectionFileSystem fs)
    {
        KvOptions o = SmallOptions(fs, writeBufferSize: 4 << 20, maxWriteBufferNumber: 2);
        o.DisableAutoCompactions = true;
        return o;
    }

    // The newest level-0 table's point entries as "key@seq:type", in table order, and its num-entries property.
    private static (List<string> Entries, ulong NumEntries) NewestLevel0Table(FaultInjectionFileSystem fs, KvDb db)
    {
        FileMetaData f = db.Impl.Versions.Current.Files(0)[0];
        string path = FileNames.TableFile(db.Path, f.Number);
        using TableReader reader = TableReader.Open(fs.OpenRandomAccess(path), (long)f.FileSize, new TableOptions(), path);
        var entries = new List<string>();
        using (InternalIterator it = reader.NewIterator(verifyChecksums: true, fillCache: false))
        {
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
                ValueType type = InternalKeys.Type(it.Key);
                string t = type switch { ValueType.Value => "v", ValueType.Deletion => "del", ValueType.SingleDeletion => "sdel", _ => type.ToString() };
                entries.Add($"{S(InternalKeys.UserKey(it.Key))}@{InternalKeys.Sequence(it.Key)}:{t}");
            }
        }
        return (entries, reader.Properties.NumEntries);
    }

    [Fact]
    public void OverwrittenKeysFlushOneEntryEach()
    {
        var fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        for (int round = 0; round < 20; round++)
        {
            for (int k = 0; k < 50; k++)
            {
                db.Put(B($"k{k:D3}"), B($"v{round}"));
            }
        }
        db.Flush();
        (List<string> entries, ulong numEntries) = NewestLevel0Table(fs, db);
        Assert.Equal(50UL, numEntries);
        Assert.Equal(50, entries.Count);
        // The newest version of each key (round 19: sequences 951..1000) and nothing else.
        Assert.Equal("k000@951:v", entries[0]);
        Assert.Equal("k049@1000:v", entries[^1]);
        FileMetaData f = db.Impl.Versions.Current.Files(0)[0];
        Assert.Equal(951UL, f.SmallestSeqno);
        Assert.Equal(1000UL, f.LargestSeqno);
        Assert.Equal("k000", S(InternalKeys.UserKey(f.Smallest)));
        Assert.Equal("k049@1000", $"{S(InternalKeys.UserKey(f.Largest))}@{InternalKeys.Sequence(f.Largest)}");
        for (int k = 0; k < 50; k++)
        {
            Assert.Equal("v19", S(db.Get(B($"k{k:D3}"))));
        }
    }

    [Fact]
    public void SnapshotsKeepExactlyTheVersionsTheySee()
    {
        var fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        db.Put(B("a"), B("a1"));                // 1
        db.Put(B("a"), B("a2"));                // 2
        db.Put(B("b"), B("b1"));                // 3
        using Snapshot s1 = db.GetSnapshot();   // at 3: a2, b1
        db.Put(B("a"), B("a3"));                // 4
        db.Delete(B("b"));                      // 5
        db.Put(B("a"), B("a4"));                // 6
        using Snapshot s2 = db.GetSnapshot();   // at 6: a4, no b
        Snapshot released = db.GetSnapshot();   // at 6, gone before the flush
        released.Dispose();
        db.Put(B("a"), B("a5"));                // 7
        db.Put(B("b"), B("b2"));                // 8
        db.Put(B("c"), B("c1"));                // 9: no snapshot between its versions
        db.Put(B("c"), B("c2"));                // 10
        db.Flush();

        (List<string> entries, _) = NewestLevel0Table(fs, db);
        Assert.Equal(new[] { "a@7:v", "a@6:v", "a@2:v", "b@8:v", "b@5:del", "b@3:v", "c@10:v" }, entries);

        Assert.Equal("0", db.GetProperty("rocksdb.num-entries-active-mem-table")); // the reads below come from the table
        Assert.Equal("a2", S(db.Get(B("a"), new ReadOptions { Snapshot = s1 })));
        Assert.Equal("b1", S(db.Get(B("b"), new ReadOptions { Snapshot = s1 })));
        Assert.Null(db.Get(B("c"), new ReadOptions { Snapshot = s1 }));
        Assert.Equal("a4", S(db.Get(B("a"), new ReadOptions { Snapshot = s2 })));
        Assert.Null(db.Get(B("b"), new ReadOptions { Snapshot = s2 }));
        Assert.Equal("a5", S(db.Get(B("a"))));
        Assert.Equal("b2", S(db.Get(B("b"))));
        Assert.Equal("c2", S(db.Get(B("c"))));
        Assert.Equal(new SortedDictionary<string, string> { ["a"] = "a2", ["b"] = "b1" }, ReadAll(db, new ReadOptions { Snapshot = s1 }));
    }

    [Fact]
    public void DeletionsStillHideOlderFlushedData()
    {
        var fs = NewFs();
        KvOptions options = Options(fs);
        using (KvDb db = KvDb.Open(DbPath, options))
        {
            db.Put(B("a"), B("old"));
            db.Put(B("b"), B("old"));
            db.Put(B("c"), B("old"));
            db.Flush();
            db.Put(B("a"), B("new"));
            db.Delete(B("a"));          // newest: kept, hides a@1 below
            db.Delete(B("b"));
            db.Put(B("b"), B("again"));
            db.Delete(B("b"));          // two deletions of b: only the newest stays
            var batch = new WriteBatch();
            batch.SingleDelete(B("c"));
            db.Write(batch);
            db.Flush();

            (List<string> entries, ulong numEntries) = NewestLevel0Table(fs, db);
            Assert.Equal(new[] { "a@5:del", "b@8:del", "c@9:sdel" }, entries);
            Assert.Equal(3UL, numEntries);
            Assert.Empty(ReadAll(db));
            Assert.Null(db.Get(B("a")));
        }
        using (KvDb db = KvDb.Open(DbPath, options))
        {
            Assert.Empty(ReadAll(db));
        }
    }

    [Fact]
    public void PointsCoveredByANewerRangeTombstoneGoUnlessASnapshotSeesThem()
    {
        var fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        db.Put(B("k1"), B("x"));                // 1
        db.Put(B("k2"), B("x"));                // 2
        using Snapshot s = db.GetSnapshot();    // at 2
        db.Put(B("k3"), B("x"));                // 3
        db.DeleteRange(B("k1"), B("k4"));       // 4
        db.Put(B("k3"), B("y"));                // 5: newer than the tombstone
        db.Put(B("k5"), B("x"));                // 6: outside it
        db.Flush();

        (List<string> entries, _) = NewestLevel0Table(fs, db);
        // k1@1 and k2@2 are covered, but snapshot 2 still reads them; k3@3 shares the tombstone's stripe.
        Assert.Equal(new[] { "k1@1:v", "k2@2:v", "k3@5:v", "k5@6:v" }, entries);
        Assert.Equal(new SortedDictionary<string, string> { ["k3"] = "y", ["k5"] = "x" }, ReadAll(db));
        Assert.Equal(new SortedDictionary<string, string> { ["k1"] = "x", ["k2"] = "x" }, ReadAll(db, new ReadOptions { Snapshot = s }));
    }

    [Fact]
    public void AFlushOfOnlyCoveredPointsKeepsTheTombstone()
    {
        var fs = NewFs();
        KvOptions options = Options(fs);
        using (KvDb db = KvDb.Open(DbPath, options))
        {
            db.Put(B("k1"), B("old"));
            db.Flush();
            db.Put(B("k1"), B("x"));
            db.Put(B("k2"), B("x"));
            db.DeleteRange(B("k0"), B("k9"));
            db.Flush();
            (List<string> entries, _) = NewestLevel0Table(fs, db);
            Assert.Empty(entries);
            Assert.Equal(2, db.Impl.Versions.Current.NumFiles(0));
            Assert.Empty(ReadAll(db));
        }
        using (KvDb db = KvDb.Open(DbPath, options))
        {
            Assert.Empty(ReadAll(db));
            Assert.Null(db.Get(B("k1")));
        }
    }

    [Fact]
    public void RecoveryFlushDropsShadowedVersionsToo()
    {
        var fs = NewFs();
        KvOptions options = Options(fs);
        KvDb crashed = KvDb.Open(DbPath, options);
        for (int round = 0; round < 10; round++)
        {
            crashed.Put(B("a"), B($"a{round}"));
            crashed.Put(B("b"), B($"b{round}"));
        }
        crashed.Delete(B("b"));
        Abandon(fs, crashed, powerLoss: false); // the WAL alone holds the writes

        using KvDb db = KvDb.Open(DbPath, options); // replays the WAL and flushes it to level 0
        (List<string> entries, _) = NewestLevel0Table(fs, db);
        Assert.Equal(new[] { "a@19:v", "b@21:del" }, entries);
        Assert.Equal(new SortedDictionary<string, string> { ["a"] = "a9" }, ReadAll(db));
    }

    [Fact]
    public void MergedMemtablesKeepOnlyTheNewestVersionAcrossThem()
    {
        var fs = NewFs();
        KvOptions options = SmallOptions(fs, 16 << 10, maxWriteBufferNumber: 6);
        options.MinWriteBufferNumberToMerge = 3;
        options.DisableAutoCompactions = true;
        using KvDb db = KvDb.Open(DbPath, options);
        var value = new byte[1000];
        int i = 0;
        while (db.GetProperty("rocksdb.num-immutable-mem-table") != "2")
        {
            Assert.True(i < 1000, "the memtable never switched twice");
            value[0] = (byte)i;
            db.Put(B($"k{i % 10}"), value);
            i++;
        }
        db.Flush(); // the two waiting memtables and the active one, merged into one table
        Assert.Equal(1, db.Impl.Versions.Current.NumFiles(0));
        (List<string> entries, ulong numEntries) = NewestLevel0Table(fs, db);
        Assert.Equal(10UL, numEntries);
        for (int k = 0; k < 10; k++)
        {
            int last = i - 1 - ((i - 1 - k) % 10); // the last write of key k
            Assert.Equal($"k{k}@{last + 1}:v", entries[k]);
            Assert.Equal((byte)last, db.Get(B($"k{k}"))![0]);
        }
    }
}
