using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Storage;
using KvEngine.Table;
using KvEngine.Versions;

using static KvEngine.Tests.Db.DbTestUtil;
using ValueType = KvEngine.Format.ValueType;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Tests.Db;

/// <summary>
/// SingleDelete (RocksDB's): reads treat it as a deletion; a flush or compaction drops it with the
/// one entry of its key it meets in the same snapshot stripe, keeps both across a snapshot; a model
/// test of the documented contract (each key written once between removals) across flushes,
/// compactions, snapshots and reopens.
/// </summary>
public sealed class SingleDeleteTests
{
    private static KvOptions Options(FaultInjectionFileSystem fs)
    {
        KvOptions o = SmallOptions(fs, writeBufferSize: 4 << 20, maxWriteBufferNumber: 2);
        o.DisableAutoCompactions = true;
        return o;
    }

    // Every point entry of every live table, as "key@seq:type", in table order, tables by level.
    internal static List<string> AllTableEntries(IFileSystem fs, KvDb db, ColumnFamilyHandle? family = null)
    {
        var entries = new List<string>();
        Version v = db.Impl.Resolve(family ?? db.DefaultColumnFamily).Versions.Current;
        for (int level = 0; level < Version.NumLevels; level++)
        {
            foreach (FileMetaData f in v.Files(level))
            {
                string path = FileNames.TableFile(db.Path, f.Number);
                using TableReader reader = TableReader.Open(fs.OpenRandomAccess(path), (long)f.FileSize, new TableOptions(), path);
                using InternalIterator it = reader.NewIterator(verifyChecksums: true, fillCache: false);
                for (it.SeekToFirst(); it.Valid; it.Next())
                {
                    ValueType type = InternalKeys.Type(it.Key);
                    string t = type switch { ValueType.Value => "v", ValueType.Deletion => "del", ValueType.SingleDeletion => "sdel", _ => type.ToString() };
                    entries.Add($"{S(InternalKeys.UserKey(it.Key))}@{InternalKeys.Sequence(it.Key)}:{t}");
                }
            }
        }
        return entries;
    }

    [Fact]
    public void ReadsTreatASingleDeletionAsADeletionInMemtableAndTables()
    {
        var fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        db.Put(B("a"), B("1"));
        db.Put(B("b"), B("2"));
        db.Flush();
        db.SingleDelete(B("a"));
        Assert.Null(db.Get(B("a")));
        Assert.Equal(new SortedDictionary<string, string> { ["b"] = "2" }, ReadAll(db));
        db.Flush(); // the deletion in its own table, the value in an older one
        Assert.Contains("a@3:sdel", AllTableEntries(fs, db));
        Assert.Null(db.Get(B("a")));
        Assert.Equal(new SortedDictionary<string, string> { ["b"] = "2" }, ReadAll(db));
        using KvIterator it = db.NewIterator();
        it.SeekToLast();
        Assert.Equal("b", S(it.Key));
        it.Prev();
        Assert.False(it.Valid);
    }

    [Fact]
    public void FlushDropsTheDeletionWithTheValueItMeets()
    {
        var fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        db.Put(B("a"), B("1"));
        db.Put(B("b"), B("2"));
        var batch = new WriteBatch();
        batch.SingleDelete(B("a"));
        db.Write(batch);
        db.Flush();
        Assert.Equal(new[] { "b@2:v" }, AllTableEntries(fs, db));
        Assert.Null(db.Get(B("a")));
    }

    [Fact]
    public void ASnapshotBetweenThemKeepsBothUntilItIsReleased()
    {
        var fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        db.Put(B("a"), B("1"));
        Snapshot s = db.GetSnapshot();
        db.SingleDelete(B("a"));
        db.Put(B("z"), B("z"));
        db.Flush();
        Assert.Equal(new[] { "a@2:sdel", "a@1:v", "z@3:v" }, AllTableEntries(fs, db));
        Assert.Equal("1", S(db.Get(B("a"), new ReadOptions { Snapshot = s })));
        Assert.Null(db.Get(B("a")));
        db.CompactRange(null, null);
        Assert.Equal(new[] { "a@2:sdel", "a@1:v", "z@3:v" }, AllTableEntries(fs, db)); // z is newer than the snapshot
        Assert.Equal("1", S(db.Get(B("a"), new ReadOptions { Snapshot = s })));
        s.Dispose();
        db.Put(B("b"), B("b"));
        db.Flush(); // an overlapping level-0 table, so the bottom table is compacted again
        db.CompactRange(null, null);
        Assert.Equal(new[] { "b@0:v", "z@0:v" }, AllTableEntries(fs, db));
        Assert.Null(db.Get(B("a")));
    }

    [Fact]
    public void CompactionDropsThePairAcrossTablesAndFamilies()
    {
        var fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        ColumnFamilyHandle cf = db.CreateColumnFamily("cf", new ColumnFamilyOptions { DisableAutoCompactions = true });
        for (int i = 0; i < 10; i++)
        {
            db.Put(cf, B($"k{i}"), B($"v{i}"));
        }
        db.Flush(cf);
        for (int i = 0; i < 10; i += 2)
        {
            db.SingleDelete(cf, B($"k{i}"));
        }
        db.Flush(cf);
        Assert.Equal(2, TotalTableFiles(db, cf));
        db.CompactRange(cf, null, null);
        var remaining = new List<string>();
        using (KvIterator it = db.NewIterator(cf))
        {
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
                remaining.Add(S(it.Key));
            }
        }
        Assert.Equal(new[] { "k1", "k3", "k5", "k7", "k9" }, remaining);
        Assert.Equal(new[] { "k1@0:v", "k3@0:v", "k5@0:v", "k7@0:v", "k9@0:v" }, AllTableEntries(fs, db, cf));
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void ModelWithKeysWrittenOnceBetweenRemovals(int seed)
    {
        var fs = NewFs();
        KvOptions options = SmallOptions(fs, writeBufferSize: 8 << 10, maxWriteBufferNumber: 2);
        options.Level0FileNumCompactionTrigger = 2;
        var random = new Random(seed);
        var model = new SortedDictionary<string, string>(StringComparer.Ordinal);
        var snapshots = new List<(Snapshot Snapshot, SortedDictionary<string, string> Model)>();
        KvDb db = KvDb.Open(DbPath, options);
        try
        {
            for (int op = 0; op < 3000; op++)
            {
                string key = $"key{random.Next(300):D4}";
                int r = random.Next(100);
                if (r < 90)
                {
                    if (model.ContainsKey(key))
                    {
                        var batch = new WriteBatch();
                        batch.SingleDelete(B(key));
                        if (random.Next(2) == 0)
                        {
                            db.SingleDelete(B(key));
                        }
                        else
                        {
                            db.Write(batch);
                        }
                        model.Remove(key);
                    }
                    else
                    {
                        string value = $"{key}-{op}-" + new string('x', random.Next(100));
                        db.Put(B(key), B(value)); // the key's only write until it is single-deleted
                        model[key] = value;
                    }
                }
                else if (r < 93)
                {
                    db.Flush();
                }
                else if (r < 95)
                {
                    db.CompactRange(null, null);
                }
                else if (r < 97)
                {
                    snapshots.Add((db.GetSnapshot(), new SortedDictionary<string, string>(model, StringComparer.Ordinal)));
                }
                else if (r < 99 && snapshots.Count > 0)
                {
                    int i = random.Next(snapshots.Count);
                    AssertSame(snapshots[i].Model, ReadAll(db, new ReadOptions { Snapshot = snapshots[i].Snapshot }));
                    snapshots[i].Snapshot.Dispose();
                    snapshots.RemoveAt(i);
                }
                else
                {
                    foreach ((Snapshot s, _) in snapshots)
                    {
                        s.Dispose();
                    }
                    snapshots.Clear();
                    db.Dispose();
                    db = KvDb.Open(DbPath, options);
                }
                if (op % 100 == 0)
                {
                    AssertSame(model, ReadAll(db));
                    string probe = $"key{random.Next(300):D4}";
                    Assert.Equal(model.GetValueOrDefault(probe), db.Get(B(probe)) is { } v ? S(v) : null);
                }
            }
            foreach ((Snapshot s, SortedDictionary<string, string> m) in snapshots)
            {
                AssertSame(m, ReadAll(db, new ReadOptions { Snapshot = s }));
                s.Dispose();
            }
            db.CompactRange(null, null);
            AssertSame(model, ReadAll(db));
            // Fully compacted without snapshots: every pair is gone, no tombstone is left.
            Assert.DoesNotContain(AllTableEntries(fs, db), e => e.EndsWith(":sdel", StringComparison.Ordinal));
            Assert.Equal(model.Count, AllTableEntries(fs, db).Count);
            db.Dispose();
            db = KvDb.Open(DbPath, options);
            AssertSame(model, ReadAll(db));
        }
        finally
        {
            db.Dispose();
        }
    }

    private static void AssertSame(SortedDictionary<string, string> expected, SortedDictionary<string, string> actual)
    {
        foreach (KeyValuePair<string, string> e in expected)
        {
            Assert.True(actual.TryGetValue(e.Key, out string? v), $"missing {e.Key}");
            Assert.True(v == e.Value, $"{e.Key}: {v} instead of {e.Value}");
        }
        foreach (string k in actual.Keys)
        {
            Assert.True(expected.ContainsKey(k), $"unexpected {k} = {actual[k]}");
        }
    }
}
