using System.Text;
using KvEngine.Tests.Db;

namespace KvEngine.Tests.Prefix;

/// <summary>
/// Prefix extractor, prefix Bloom filters and prefix seek against an in-memory model, across
/// memtable, flushed tables (full and partitioned filters, with and without whole keys),
/// compaction and reopen: Get, PrefixSameAsStart seeks (both directions), TotalOrderSeek scans,
/// the legacy prefix-seek mode within the target's prefix, and the prefix tickers that show tables
/// were actually skipped.
/// </summary>
public sealed class PrefixSeekModelTests : IDisposable
{
    private const int PrefixLength = 8;
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-prefix-");

    public void Dispose() => _dir.Delete(recursive: true);

    private static KvOptions Options(bool partitioned, bool wholeKey, KvStatistics stats, KvPrefixExtractor? extractor, bool decoupled = true) => new()
    {
        DecouplePartitionedFilters = decoupled,
        WriteBufferSize = 64 << 10,
        BlockSize = 512,
        DisableAutoCompactions = true,
        PrefixExtractor = extractor,
        WholeKeyFiltering = wholeKey,
        IndexType = partitioned ? KvIndexType.TwoLevelIndexSearch : KvIndexType.BinarySearch,
        PartitionFilters = partitioned,
        MetadataBlockSize = 256,
        Statistics = stats,
    };

    // Prefix i: "pfx" + 5 digits (8 bytes); even prefixes are written, odd ones never are.
    private static byte[] Prefix(int i) => Encoding.ASCII.GetBytes($"pfx{i:D5}");

    private static byte[] Key(Random rng, int prefix)
    {
        byte[] p = Prefix(prefix);
        int suffix = rng.Next(4) == 0 ? 0 : rng.Next(1, 6);
        var key = new byte[p.Length + suffix];
        p.CopyTo(key, 0);
        for (int i = p.Length; i < key.Length; i++)
        {
            key[i] = (byte)('a' + rng.Next(6));
        }
        return key;
    }

    private static void Apply(KvDb kv, SortedDictionary<byte[], byte[]> model, Random rng, int ops, int prefixes)
    {
        for (int i = 0; i < ops; i++)
        {
            // Mostly in-domain keys of even prefixes; some short keys (out of FixedPrefix's domain).
            byte[] key = rng.Next(20) == 0 ? Encoding.ASCII.GetBytes($"s{rng.Next(50)}") : Key(rng, 2 * rng.Next(prefixes / 2));
            if (rng.Next(6) == 0)
            {
                kv.Delete(key);
                model.Remove(key);
            }
            else
            {
                byte[] value = Encoding.ASCII.GetBytes($"v{i}-{rng.Next()}");
                kv.Put(key, value);
                model[key] = value;
            }
        }
    }

    private static bool HasPrefix(byte[] key, byte[] prefix) => key.Length >= prefix.Length && key.AsSpan(0, prefix.Length).SequenceEqual(prefix);

    [Theory]
    [InlineData(false, false, true)]
    [InlineData(false, true, true)]
    [InlineData(true, false, true)]
    [InlineData(true, true, true)]
    [InlineData(true, false, false)]
    [InlineData(true, true, false)]
    public void GetAndSeekMatchTheModel(bool partitioned, bool wholeKey, bool decoupled)
    {
        const int Prefixes = 60;
        string path = Path.Combine(_dir.FullName, "db");
        var rng = new Random(partitioned ? 11 : 7 + (wholeKey ? 100 : 0));
        var model = new SortedDictionary<byte[], byte[]>(ByteArrayComparer.Instance);
        var stats = new KvStatistics();
        KvPrefixExtractor extractor = KvPrefixExtractor.FixedPrefix(PrefixLength);
        using (KvDb kv = KvDb.Open(path, Options(partitioned, wholeKey, stats, extractor, decoupled)))
        {
            // Tables of disjoint prefix groups, so most tables lack most prefixes.
            for (int round = 0; round < 4; round++)
            {
                for (int i = 0; i < 800; i++)
                {
                    byte[] key = Key(rng, 2 * ((round * 7) + rng.Next(7)));
                    byte[] value = Encoding.ASCII.GetBytes($"r{round}-{i}");
                    kv.Put(key, value);
                    model[key] = value;
                }
                kv.Flush();
            }
            Apply(kv, model, rng, 3000, Prefixes);
            kv.Flush();
            Check(kv, model, rng, stats, Prefixes, "flushed");
            kv.CompactRange(null, null);
            Apply(kv, model, rng, 1500, Prefixes); // memtable and tables together
            Check(kv, model, rng, stats, Prefixes, "compacted + memtable");
        }
        using (KvDb kv = KvDb.Open(path, Options(partitioned, wholeKey, stats, extractor, decoupled)))
        {
            Check(kv, model, rng, stats, Prefixes, "reopened");
        }
    }

    private static void Check(KvDb kv, SortedDictionary<byte[], byte[]> model, Random rng, KvStatistics stats, int prefixes, string stage)
    {
        List<byte[]> keys = model.Keys.ToList();

        // Get: every live key, and absent keys both in written prefixes and in never-written ones.
        foreach ((byte[] key, byte[] value) in model)
        {
            Assert.Equal(value, kv.Get(key));
        }
        for (int i = 0; i < 400; i++)
        {
            byte[] absent = Key(rng, rng.Next(prefixes));
            if (!model.ContainsKey(absent))
            {
                Assert.Null(kv.Get(absent));
            }
        }

        // TotalOrderSeek: a full ordered scan, and seeks anywhere, equal the model.
        var total = new ReadOptions { TotalOrderSeek = true };
        using (KvIterator it = kv.NewIterator(total))
        {
            int n = 0;
            for (it.SeekToFirst(); it.Valid; it.Next(), n++)
            {
                Assert.True(it.Key.SequenceEqual(keys[n]), $"{stage}: total order scan at {n}");
            }
            Assert.Equal(keys.Count, n);
            for (int s = 0; s < 100; s++)
            {
                byte[] target = Key(rng, rng.Next(prefixes));
                int at = LowerBound(keys, target);
                it.Seek(target);
                for (int k = 0; k < 5; k++, at++)
                {
                    Assert.Equal(at < keys.Count, it.Valid);
                    if (!it.Valid)
                    {
                        break;
                    }
                    Assert.True(it.Key.SequenceEqual(keys[at]), $"{stage}: total order seek");
                    it.Next();
                }
            }
        }

        long usefulBefore = stats.GetTickerCount(Ticker.BloomFilterPrefixUseful);
        // PrefixSameAsStart: exactly the model's keys with the target's prefix, from the target on
        // (Seek) or back from it (SeekForPrev).
        using (KvIterator it = kv.NewIterator(new ReadOptions { PrefixSameAsStart = true }))
        {
            for (int s = 0; s < 150; s++)
            {
                int p = rng.Next(prefixes);
                byte[] prefix = Prefix(p);
                byte[] target = s % 3 == 0 ? prefix : Key(rng, p);
                List<byte[]> expected = keys.Where(k => HasPrefix(k, prefix) && ByteArrayComparer.Instance.Compare(k, target) >= 0).ToList();
                var got = new List<byte[]>();
                for (it.Seek(target); it.Valid; it.Next())
                {
                    got.Add(it.Key.ToArray());
                }
                Assert.True(expected.SequenceEqual(got, ByteArrayEquality.Instance), $"{stage}: prefix seek to {Encoding.ASCII.GetString(target)}: expected {expected.Count}, got {got.Count}");

                expected = keys.Where(k => HasPrefix(k, prefix) && ByteArrayComparer.Instance.Compare(k, target) <= 0).Reverse().ToList();
                got.Clear();
                for (it.SeekForPrev(target); it.Valid; it.Prev())
                {
                    got.Add(it.Key.ToArray());
                }
                Assert.True(expected.SequenceEqual(got, ByteArrayEquality.Instance), $"{stage}: prefix seek for prev to {Encoding.ASCII.GetString(target)}");
            }
        }

        // Legacy prefix mode (neither option): within the target's prefix the results are exact.
        using (KvIterator it = kv.NewIterator())
        {
            for (int s = 0; s < 100; s++)
            {
                int p = rng.Next(prefixes);
                byte[] prefix = Prefix(p);
                byte[] target = Key(rng, p);
                List<byte[]> expected = keys.Where(k => HasPrefix(k, prefix) && ByteArrayComparer.Instance.Compare(k, target) >= 0).ToList();
                var got = new List<byte[]>();
                for (it.Seek(target); it.Valid && it.Key.StartsWith(prefix); it.Next())
                {
                    got.Add(it.Key.ToArray());
                }
                Assert.True(expected.SequenceEqual(got, ByteArrayEquality.Instance), $"{stage}: legacy prefix seek to {Encoding.ASCII.GetString(target)}");
            }
        }
        // Odd prefixes are never written: seeks to them are ruled out by the table filters.
        Assert.True(stats.GetTickerCount(Ticker.BloomFilterPrefixUseful) > usefulBefore, $"{stage}: no prefix filter skipped a table");
        Assert.True(stats.GetTickerCount(Ticker.BloomFilterPrefixChecked) >= stats.GetTickerCount(Ticker.BloomFilterPrefixUseful));
    }

    private static int LowerBound(List<byte[]> keys, byte[] target)
    {
        int lo = 0;
        int hi = keys.Count;
        while (lo < hi)
        {
            int mid = (lo + hi) / 2;
            if (ByteArrayComparer.Instance.Compare(keys[mid], target) < 0)
            {
                lo = mid + 1;
            }
            else
            {
                hi = mid;
            }
        }
        return lo;
    }

    private sealed class ByteArrayEquality : IEqualityComparer<byte[]>
    {
        public static readonly ByteArrayEquality Instance = new();

        public bool Equals(byte[]? x, byte[]? y) => x.AsSpan().SequenceEqual(y);

        public int GetHashCode(byte[] obj) => obj.Length;
    }
}
