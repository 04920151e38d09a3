using KvEngine.Storage;
using KvEngine.Tests.Db;

using static KvEngine.Tests.Compaction.CompactionTestUtil;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Compaction;

/// <summary>
/// <see cref="KvCompactionFilter"/> through real compactions (CompactRange and single-level manual
/// compactions, auto compactions off so every run is deterministic): keep / remove / change, removal
/// over an older version in a deeper level, snapshot protection, deletions never offered, a throwing
/// filter becoming the background error, and a randomized run against a model.
/// </summary>
public sealed class CompactionFilterTests
{
    private static (KvDb Db, FaultInjectionFileSystem Fs) Open(PrefixCompactionFilter filter, KvStatistics? stats = null)
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/f");
        KvOptions o = Tiny(fs, autoCompactions: false);
        o.CompactionFilter = filter;
        o.Statistics = stats;
        return (KvDb.Open("/f/db", o), fs);
    }

    private static List<(string Key, ulong Seq, ValueType Type)> AllEntries(KvDb db, IFileSystem fs)
    {
        var all = new List<(string, ulong, ValueType)>();
        for (int level = 0; level < 7; level++)
        {
            all.AddRange(Entries(db, fs, level));
        }
        return all;
    }

    [Fact]
    public void KeepsRemovesAndChangesThroughCompactRange()
    {
        var filter = new PrefixCompactionFilter();
        var stats = new KvStatistics();
        (KvDb db, FaultInjectionFileSystem fs) = Open(filter, stats);
        using (db)
        {
            db.Put(K("a"), K("keep"));
            db.Put(K("b"), K("xgone"));
            db.Put(K("c"), K("cvalue"));
            db.Flush();
            Assert.Empty(filter.Seen); // flushes never filter
            Assert.Equal(K("xgone"), db.Get(K("b")));

            db.CompactRange(null, null); // one level-0 file: a trivial move without the filter

            Assert.Equal(new[] { "a", "b", "c" }, filter.Seen.ToArray());
            Assert.Equal(K("keep"), db.Get(K("a")));
            Assert.Null(db.Get(K("b")));
            Assert.Equal(K("Cvalue"), db.Get(K("c")));
            // Nothing below and no snapshot: the removed value is physically gone, no marker left.
            Assert.Equal(new[] { "a", "c" }, AllEntries(db, fs).Select(e => e.Key).ToArray());
            Assert.Equal(1, stats.GetTickerCount(Ticker.CompactionKeyDropUser));
            Assert.Equal(1, db.Impl.Counters.KeysDroppedByFilter);
        }
    }

    [Fact]
    public void RemovalDoesNotResurrectAnOlderVersionInADeeperLevel()
    {
        var filter = new PrefixCompactionFilter { Enabled = false };
        (KvDb db, FaultInjectionFileSystem fs) = Open(filter);
        using (db)
        {
            db.Put(K("k"), K("old"));
            db.Put(K("other"), K("v"));
            db.Flush();
            db.Impl.CompactLevel(0, 1, null, null);
            db.Impl.CompactLevel(1, 2, null, null);
            Assert.Single(Entries(db, fs, 2), e => e.Key == "k");

            filter.Enabled = true;
            db.Put(K("k"), K("xnew"));
            db.Flush();
            db.Impl.CompactLevel(0, 1, null, null);

            Assert.Equal(new[] { "k" }, filter.Seen.ToArray());
            Assert.Null(db.Get(K("k"))); // "old" in level 2 stays hidden
            (string Key, ulong Seq, ValueType Type) marker = Assert.Single(Entries(db, fs, 1));
            Assert.Equal(("k", ValueType.Deletion), (marker.Key, marker.Type));
            Assert.Null(db.Get(K("k")));
            using (KvIterator it = db.NewIterator())
            {
                it.SeekToFirst();
                Assert.True(it.Valid);
                Assert.Equal("other", DbTestUtil.S(it.Key));
                it.Next();
                Assert.False(it.Valid);
            }

            // At the bottom the marker and the old version both go.
            db.Impl.CompactLevel(1, 2, null, null);
            Assert.DoesNotContain(AllEntries(db, fs), e => e.Key == "k");
            Assert.Null(db.Get(K("k")));
            Assert.Equal(K("v"), db.Get(K("other")));
        }
    }

    [Fact]
    public void CompactRangeRewritesTheBottommostLevelInPlace()
    {
        var filter = new PrefixCompactionFilter { Enabled = false };
        (KvDb db, FaultInjectionFileSystem fs) = Open(filter);
        using (db)
        {
            for (int i = 0; i < 200; i++)
            {
                db.Put(K("k" + i.ToString("D3", System.Globalization.CultureInfo.InvariantCulture)), K((i % 2 == 0 ? "x" : "v") + i));
            }
            db.CompactRange(null, null);
            db.Impl.CompactLevel(1, 2, null, null);
            Assert.Equal(0, Files(db, 0) + Files(db, 1));
            int before = Entries(db, fs, 2).Count;
            Assert.Equal(200, before);

            filter.Enabled = true; // nothing above level 2: only an in-place rewrite reaches these values
            db.CompactRange(null, null);

            Assert.Equal(200, filter.Seen.Count);
            Assert.Equal(0, Files(db, 0) + Files(db, 1));
            List<(string Key, ulong Seq, ValueType Type)> left = Entries(db, fs, 2);
            Assert.Equal(100, left.Count);
            Assert.All(left, e => Assert.Equal(ValueType.Value, e.Type));
            Assert.Null(db.Get(K("k000")));
            Assert.Equal(K("v1"), db.Get(K("k001")));
            Assert.Equal(100, DbTestUtil.ReadAll(db).Count);
        }
    }

    [Fact]
    public void ValuesASnapshotSeesAreNotFiltered()
    {
        var filter = new PrefixCompactionFilter();
        (KvDb db, FaultInjectionFileSystem fs) = Open(filter);
        using (db)
        {
            db.Put(K("p"), K("xprotected"));
            db.Put(K("q"), K("cprotected"));
            Snapshot s = db.GetSnapshot();
            db.Put(K("r"), K("xafter"));
            db.Flush();
            db.CompactRange(null, null);

            Assert.Equal(new[] { "r" }, filter.Seen.ToArray());
            Assert.Equal(K("xprotected"), db.Get(K("p")));
            Assert.Equal(K("cprotected"), db.Get(K("q")));
            Assert.Equal(K("xprotected"), db.Get(K("p"), new ReadOptions { Snapshot = s }));
            Assert.Null(db.Get(K("r")));
            // A snapshot exists, so the removal leaves a deletion marker (with the value's sequence).
            Assert.Contains(AllEntries(db, fs), e => e.Key == "r" && e.Type == ValueType.Deletion);

            s.Dispose();
            db.Put(K("pz"), K("new")); // a level-0 file inside level 1's range makes level 1 compact again
            db.Flush();
            db.CompactRange(null, null);
            Assert.Null(db.Get(K("p")));
            Assert.Equal(K("Cprotected"), db.Get(K("q")));
            Assert.Equal(new[] { "pz", "q" }, AllEntries(db, fs).Select(e => e.Key).ToArray());
        }
    }

    [Fact]
    public void DeletionsAndRangeDeletedValuesAreNeverOffered()
    {
        var filter = new PrefixCompactionFilter();
        (KvDb db, _) = Open(filter);
        using (db)
        {
            db.Put(K("k1"), K("v1"));
            db.Put(K("k2"), K("v2"));
            db.Put(K("k3"), K("v3"));
            db.Flush();
            db.Delete(K("k1"));
            db.DeleteRange(K("k2"), K("k3"));
            db.Delete(K("never-written"));
            db.Flush();
            db.CompactRange(null, null);

            Assert.Equal(new[] { "k3" }, filter.Seen.ToArray());
            Assert.Equal(K("v3"), db.Get(K("k3")));
            Assert.Null(db.Get(K("k1")));
            Assert.Null(db.Get(K("k2")));
        }
    }

    [Fact]
    public void AThrowingFilterBecomesTheBackgroundErrorAndLosesNothing()
    {
        var filter = new PrefixCompactionFilter { Throw = true };
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/f");
        KvOptions o = Tiny(fs, autoCompactions: false);
        o.CompactionFilter = filter;
        using (KvDb db = KvDb.Open("/f/db", o))
        {
            db.Put(K("a"), K("xa"));
            db.Put(K("b"), K("vb"));
            db.Flush();
            db.Put(K("a"), K("xa2"));
            db.Flush();

            KvException e = Assert.Throws<KvException>(() => db.CompactRange(null, null));
            Assert.IsType<InvalidOperationException>(e.InnerException);
            Assert.Contains("PrefixCompactionFilter", e.Message, StringComparison.Ordinal);
            Assert.Equal("1", db.GetProperty("rocksdb.background-errors"));
            Assert.Throws<KvWriteStoppedException>(() => db.Put(K("c"), K("refused")));
            Assert.Equal(K("xa2"), db.Get(K("a"))); // the inputs are untouched
            Assert.Equal(2, Files(db, 0));

            filter.Throw = false;
            db.Resume();
            db.CompactRange(null, null);
            Assert.Null(db.Get(K("a")));
            Assert.Equal(K("vb"), db.Get(K("b")));
        }
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    public void AgreesWithAModelOfTheFilter(int seed)
    {
        var filter = new PrefixCompactionFilter();
        (KvDb db, _) = Open(filter);
        var rng = new Random(seed);
        var model = new SortedDictionary<string, string>(StringComparer.Ordinal);
        string[] prefixes = { "x", "c", "v" };
        using (db)
        {
            for (int round = 0; round < 6; round++)
            {
                for (int i = 0; i < 800; i++)
                {
                    string key = "k" + rng.Next(300).ToString("D3", System.Globalization.CultureInfo.InvariantCulture);
                    int op = rng.Next(20);
                    if (op == 0)
                    {
                        db.Delete(K(key));
                        model.Remove(key);
                    }
                    else if (op == 1)
                    {
                        string end = "k" + (rng.Next(300) + 1).ToString("D3", System.Globalization.CultureInfo.InvariantCulture);
                        if (string.CompareOrdinal(key, end) < 0)
                        {
                            db.DeleteRange(K(key), K(end));
                            foreach (string k in model.Keys.Where(k => string.CompareOrdinal(k, key) >= 0 && string.CompareOrdinal(k, end) < 0).ToList())
                            {
                                model.Remove(k);
                            }
                        }
                    }
                    else
                    {
                        string value = prefixes[rng.Next(prefixes.Length)] + round + "-" + i;
                        db.Put(K(key), K(value));
                        model[key] = value;
                    }
                    if (rng.Next(200) == 0)
                    {
                        db.Flush();
                    }
                }
                // Before a compaction each key reads as written or as filtered (a part already was).
                foreach ((string k, string v) in model)
                {
                    byte[]? got = db.Get(K(k));
                    string? filtered = PrefixCompactionFilter.Apply(v);
                    Assert.True(got == null ? filtered == null : DbTestUtil.S(got) == v || DbTestUtil.S(got) == filtered,
                        $"round {round}: '{k}' read {(got == null ? "nothing" : DbTestUtil.S(got))}, model '{v}'");
                }
                // Every value has now been through a compaction: reads are exactly the filtered model.
                db.CompactRange(null, null);
                var expected = new SortedDictionary<string, string>(StringComparer.Ordinal);
                foreach ((string k, string v) in model)
                {
                    if (PrefixCompactionFilter.Apply(v) is { } f)
                    {
                        expected[k] = f;
                    }
                }
                Assert.Equal(expected, DbTestUtil.ReadAll(db));
                model = expected; // what the filter left is what a later write can overwrite
            }
        }
    }
}
