using System.Text;

namespace KvEngine.Tests.Db;

/// <summary>
/// Database iterators over partitioned tables: a snapshot keeps older versions in the tables (so
/// user keys span data blocks and index keys carry sequence numbers), and iterators at the
/// snapshot and at the latest state, with bounds, in both directions, agree with models.
/// </summary>
public sealed class PartitionedIteratorTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-partitioned-iter-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void SnapshotsAndBoundsWalkPartitionsBothWays(bool decoupled)
    {
        var options = new KvOptions
        {
            WriteBufferSize = 1 << 20,
            BlockSize = 256,
            IndexType = KvIndexType.TwoLevelIndexSearch,
            PartitionFilters = true,
            DecouplePartitionedFilters = decoupled,
            MetadataBlockSize = 256,
            DisableAutoCompactions = true,
            CacheIndexAndFilterBlocks = true,
            Compression = KvCompressionType.Lz4,
        };
        using KvDb db = KvDb.Open(Path.Combine(_dir.FullName, "db"), options);
        var old = new SortedDictionary<string, string>(StringComparer.Ordinal);
        for (int i = 0; i < 4000; i++)
        {
            string k = $"k{i:D5}";
            db.Put(Encoding.ASCII.GetBytes(k), Encoding.ASCII.GetBytes($"old{i}"));
            old[k] = $"old{i}";
        }
        using Snapshot snapshot = db.GetSnapshot();
        var now = new SortedDictionary<string, string>(old, StringComparer.Ordinal);
        var rng = new Random(5);
        for (int n = 0; n < 3000; n++)
        {
            string k = $"k{rng.Next(4000):D5}";
            if (rng.Next(4) == 0)
            {
                db.Delete(Encoding.ASCII.GetBytes(k));
                now.Remove(k);
            }
            else
            {
                db.Put(Encoding.ASCII.GetBytes(k), Encoding.ASCII.GetBytes($"new{n}"));
                now[k] = $"new{n}";
            }
        }
        db.Flush(); // one table holding both versions of many keys
        string table = Assert.Single(Directory.GetFiles(Path.Combine(_dir.FullName, "db"), "*.sst"));
        string props = KvEngine.Tests.Table.RocksDbTools.Properties(table);
        Assert.Contains("index block size (user-key? 0", props, StringComparison.Ordinal); // internal-key separators
        Assert.Matches(@"# index partitions: \d\d", props);

        // RocksDB's point lookups through these internal-key filter partitions find the latest values.
        List<KeyValuePair<string, string>> live = now.ToList();
        List<byte[]?> got = KvEngine.Tests.Interop.RocksDbOracle.Get(Path.Combine(_dir.FullName, "db"), live.ConvertAll(p => Encoding.ASCII.GetBytes(p.Key)));
        Assert.Equal(live.Count, got.Count);
        for (int i = 0; i < live.Count; i++)
        {
            Assert.Equal(live[i].Value, Encoding.ASCII.GetString(got[i]!));
        }

        foreach ((Snapshot? snap, SortedDictionary<string, string> model) in new[] { ((Snapshot?)snapshot, old), (null, now) })
        {
            foreach ((string? lower, string? upper) in new[] { ((string?)null, (string?)null), ("k00777", "k03111"), ("k01000x", null), (null, "k00050") })
            {
                var ro = new ReadOptions
                {
                    Snapshot = snap,
                    IterateLowerBound = lower == null ? null : Encoding.ASCII.GetBytes(lower),
                    IterateUpperBound = upper == null ? null : Encoding.ASCII.GetBytes(upper),
                };
                List<string> expected = model
                    .Where(p => (lower == null || string.CompareOrdinal(p.Key, lower) >= 0) && (upper == null || string.CompareOrdinal(p.Key, upper) < 0))
                    .Select(p => $"{p.Key}={p.Value}").ToList();
                using KvIterator it = db.NewIterator(ro);
                var forward = new List<string>();
                for (it.SeekToFirst(); it.Valid; it.Next())
                {
                    forward.Add($"{Encoding.ASCII.GetString(it.Key)}={Encoding.ASCII.GetString(it.Value)}");
                }
                Assert.Equal(expected, forward);
                var backward = new List<string>();
                for (it.SeekToLast(); it.Valid; it.Prev())
                {
                    backward.Add($"{Encoding.ASCII.GetString(it.Key)}={Encoding.ASCII.GetString(it.Value)}");
                }
                backward.Reverse();
                Assert.Equal(expected, backward);

                // Seeks into the middle, then a change of direction.
                foreach (string target in new[] { "k00500", "k01999x", "k02500" })
                {
                    it.Seek(Encoding.ASCII.GetBytes(target));
                    string? first = expected.FirstOrDefault(e => string.CompareOrdinal(e[..e.IndexOf('=')], target) >= 0);
                    Assert.Equal(first != null, it.Valid);
                    if (first != null)
                    {
                        Assert.Equal(first, $"{Encoding.ASCII.GetString(it.Key)}={Encoding.ASCII.GetString(it.Value)}");
                        it.Prev();
                        int at = expected.IndexOf(first);
                        Assert.Equal(at > 0, it.Valid);
                        if (at > 0)
                        {
                            Assert.Equal(expected[at - 1], $"{Encoding.ASCII.GetString(it.Key)}={Encoding.ASCII.GetString(it.Value)}");
                        }
                    }
                }
            }
            foreach (KeyValuePair<string, string> p in model)
            {
                byte[]? v = db.Get(Encoding.ASCII.GetBytes(p.Key), new ReadOptions { Snapshot = snap });
                Assert.Equal(p.Value, v == null ? null : Encoding.ASCII.GetString(v));
            }
        }
    }

    [Fact]
    public void PartitionsSurviveTheCompressedSecondaryCacheAndFileClosing()
    {
        var stats = new KvStatistics();
        using var cache = new KvBlockCache(96 << 10, numShardBits: 0, compressedSecondaryCacheSize: 4 << 20);
        var options = new KvOptions
        {
            WriteBufferSize = 256 << 10,
            BlockSize = 256,
            IndexType = KvIndexType.TwoLevelIndexSearch,
            PartitionFilters = true,
            MetadataBlockSize = 512,
            CacheIndexAndFilterBlocks = true,
            PinTopLevelIndexAndFilter = false,
            BlockCache = cache,
            Statistics = stats,
            MaxOpenFiles = 20, // the table cache closes idle files; partitions are read after reopening them
            DisableAutoCompactions = true,
        };
        string path = Path.Combine(_dir.FullName, "db2");
        var model = new SortedDictionary<string, string>(StringComparer.Ordinal);
        using (KvDb db = KvDb.Open(path, options))
        {
            for (int t = 0; t < 12; t++)
            {
                for (int i = 0; i < 1500; i++)
                {
                    string k = $"t{t:D2}-{i:D5}";
                    model[k] = $"value-{t}-{i}-{new string('x', i % 40)}";
                    db.Put(Encoding.ASCII.GetBytes(k), Encoding.ASCII.GetBytes(model[k]));
                }
                db.Flush();
            }
            for (int round = 0; round < 3; round++)
            {
                foreach (KeyValuePair<string, string> p in model)
                {
                    byte[]? v = db.Get(Encoding.ASCII.GetBytes(p.Key));
                    Assert.Equal(p.Value, v == null ? null : Encoding.ASCII.GetString(v));
                    Assert.Null(db.Get(Encoding.ASCII.GetBytes(p.Key + "?")));
                }
            }
        }
        Assert.True(stats.GetTickerCount(Ticker.SecondaryCacheHits) > 0, "nothing came back from the secondary cache");
        Assert.True(stats.GetTickerCount(Ticker.BlockCacheIndexMiss) > 12, "index partitions never left the primary cache");
        Assert.True(stats.GetTickerCount(Ticker.NoFileOpens) > 12, "no table file was reopened");
    }
}
