using KvEngine.Db;
using KvEngine.Db.Read;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Tests.Iterators;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Db;

/// <summary>Randomized comparison of DbIterator against a LINQ model of snapshot visibility.</summary>
public class DbIteratorModelTests
{
    private sealed class ChunkFactory((byte[] Key, byte[] Value)[][] files) : ITableIteratorFactory
    {
        public InternalIterator Open(int fileIndex) => new VectorIterator(files[fileIndex]);
    }

    private sealed record Entry(byte[] UserKey, ulong Seq, ValueType Type, byte[] Value, int Source);

    private sealed record Tombstone(byte[] Start, byte[] End, ulong Seq);

    private sealed class Data
    {
        public List<Entry> Entries { get; } = [];

        public List<Tombstone> Tombstones { get; } = [];

        public int Sources { get; init; }

        public ulong MaxSeq => (ulong)(Entries.Count + Tombstones.Count);

        /// <summary>Source 0 is a LevelIterator over files of up to 7 entries when there are several sources.</summary>
        public InternalIterator Open()
        {
            var iters = new InternalIterator[Sources];
            for (int s = 0; s < Sources; s++)
            {
                var entries = Entries.Where(e => e.Source == s)
                    .Select(e => (Key: InternalKeys.Create(e.UserKey, e.Seq, e.Type), e.Value))
                    .OrderBy(e => e.Key, InternalKeyComparer.Instance)
                    .ToList();
                if (s == 0 && Sources > 1)
                {
                    var files = entries.Chunk(7).ToArray();
                    iters[s] = new LevelIterator(
                        files.Select(f => f[0].Key).ToArray(), files.Select(f => f[^1].Key).ToArray(), new ChunkFactory(files));
                }
                else
                {
                    iters[s] = new VectorIterator(entries);
                }
            }
            return MergingIterator.Create(iters);
        }

        public TestRangeDelAggregator? Aggregator(ulong readSeq) =>
            Tombstones.Count == 0 ? null
                : new TestRangeDelAggregator(Tombstones.Select(t => (t.Start, t.End, t.Seq)), readSeq);
    }

    // Sources with many versions per user key (40 user keys), unique sequences, random types.
    private static Data Build(Random rng, int sources, int entries, int tombstones)
    {
        var data = new Data { Sources = sources };
        int total = entries + tombstones;
        ulong[] seqs = Enumerable.Range(1, total).Select(i => (ulong)i).OrderBy(_ => rng.Next()).ToArray();
        for (int i = 0; i < entries; i++)
        {
            int r = rng.Next(100);
            ValueType type = r < 60 ? ValueType.Value : r < 85 ? ValueType.Deletion : ValueType.SingleDeletion;
            byte[] value = type == ValueType.Value ? IterTestData.Bytes($"v{seqs[i]}") : [];
            data.Entries.Add(new Entry(IterTestData.RandomUserKey(rng), seqs[i], type, value, rng.Next(sources)));
        }
        // As after a bottommost compaction: some keys' oldest version has sequence 0.
        foreach (var group in data.Entries.GroupBy(e => Convert.ToHexString(e.UserKey)).ToList())
        {
            if (rng.Next(3) == 0)
            {
                Entry oldest = group.MinBy(e => e.Seq)!;
                data.Entries[data.Entries.IndexOf(oldest)] = oldest with { Seq = 0 };
            }
        }
        for (int i = 0; i < tombstones; i++)
        {
            byte[] a = IterTestData.RandomUserKey(rng);
            byte[] b = IterTestData.RandomUserKey(rng, target: true);
            if (a.AsSpan().SequenceCompareTo(b) > 0)
            {
                (a, b) = (b, a);
            }
            data.Tombstones.Add(new Tombstone(a, b, seqs[entries + i]));
        }
        return data;
    }

    // The visible (user key, value) pairs in key order: newest entry with seq <= readSeq per key,
    // kept when a Value not covered by a newer visible tombstone, then filtered by the bounds.
    private static List<(byte[] Key, string Value)> Expected(Data data, ulong readSeq, byte[]? lower, byte[]? upper) =>
        data.Entries
            .Where(e => e.Seq <= readSeq)
            .GroupBy(e => Convert.ToHexString(e.UserKey))
            .Select(g => g.OrderByDescending(e => e.Seq).First())
            .Where(e => e.Type == ValueType.Value)
            .Where(e => !data.Tombstones.Any(t => t.Seq <= readSeq && t.Seq > e.Seq
                && e.UserKey.AsSpan().SequenceCompareTo(t.Start) >= 0 && e.UserKey.AsSpan().SequenceCompareTo(t.End) < 0))
            .Where(e => lower is null || e.UserKey.AsSpan().SequenceCompareTo(lower) >= 0)
            .Where(e => upper is null || e.UserKey.AsSpan().SequenceCompareTo(upper) < 0)
            .OrderBy(e => e.UserKey, Comparer<byte[]>.Create((a, b) => a.AsSpan().SequenceCompareTo(b)))
            .Select(e => (e.UserKey, IterTestData.Text(e.Value)))
            .ToList();

    [Theory]
    [InlineData(1, 1, 200, 0)]
    [InlineData(2, 3, 400, 0)]
    [InlineData(3, 5, 600, 0)]
    [InlineData(4, 4, 300, 6)]
    [InlineData(5, 2, 800, 3)]
    [InlineData(6, 6, 100, 0)]
    [InlineData(7, 3, 500, 10)]
    [InlineData(8, 2, 20, 1)]
    public void MatchesModelAtRandomSnapshotsAndBounds(int seed, int sources, int entries, int tombstones)
    {
        var rng = new Random(seed);
        Data data = Build(rng, sources, entries, tombstones);
        int[] skips = [0, 1, 2, DbIterator.DefaultMaxSequentialSkip, int.MaxValue];
        for (int round = 0; round < 12; round++)
        {
            ulong readSeq = round == 0 ? data.MaxSeq : (ulong)rng.NextInt64(0, (long)data.MaxSeq + 2);
            byte[]? lower = rng.Next(3) == 0 ? IterTestData.RandomUserKey(rng, target: true) : null;
            byte[]? upper = rng.Next(3) == 0 ? IterTestData.RandomUserKey(rng, target: true) : null;
            int maxSkip = skips[rng.Next(skips.Length)];
            var expected = Expected(data, readSeq, lower, upper);
            using var it = new DbIterator(data.Open(), readSeq, lower, upper, data.Aggregator(readSeq), maxSkip);
            string config = $"round {round} seq {readSeq} lower '{(lower is null ? "-" : IterTestData.Text(lower))}' "
                + $"upper '{(upper is null ? "-" : IterTestData.Text(upper))}' skip {maxSkip}";
            RunOps(rng, it, expected, 400, config);
        }
    }

    private static void RunOps(Random rng, DbIterator it, List<(byte[] Key, string Value)> expected, int ops, string config)
    {
        int pos = -1;
        for (int op = 0; op < ops; op++)
        {
            bool valid = pos >= 0 && pos < expected.Count;
            int r = rng.Next(100);
            string what;
            if (r < 6)
            {
                what = "SeekToFirst";
                it.SeekToFirst();
                pos = 0;
            }
            else if (r < 12)
            {
                what = "SeekToLast";
                it.SeekToLast();
                pos = expected.Count - 1;
            }
            else if (r < 22)
            {
                byte[] t = IterTestData.RandomUserKey(rng, target: true);
                what = $"Seek '{IterTestData.Text(t)}'";
                it.Seek(t);
                pos = expected.FindIndex(e => e.Key.AsSpan().SequenceCompareTo(t) >= 0) is int i and >= 0 ? i : expected.Count;
            }
            else if (r < 32)
            {
                byte[] t = IterTestData.RandomUserKey(rng, target: true);
                what = $"SeekForPrev '{IterTestData.Text(t)}'";
                it.SeekForPrev(t);
                pos = expected.FindLastIndex(e => e.Key.AsSpan().SequenceCompareTo(t) <= 0);
            }
            else if (!valid)
            {
                continue;
            }
            else if (r < 66)
            {
                what = "Next";
                it.Next();
                pos++;
            }
            else
            {
                what = "Prev";
                it.Prev();
                pos--;
            }
            valid = pos >= 0 && pos < expected.Count;
            Assert.True(valid == it.Valid, $"{config}, op {op} {what}: valid {it.Valid}, expected {valid}");
            if (valid)
            {
                Assert.True(expected[pos].Key.AsSpan().SequenceEqual(it.Key),
                    $"{config}, op {op} {what}: key '{IterTestData.Text(it.Key)}', expected '{IterTestData.Text(expected[pos].Key)}'");
                Assert.Equal(expected[pos].Value, IterTestData.Text(it.Value));
            }
        }
    }

    [Fact]
    public void FullScansMatchModelBothWays()
    {
        var rng = new Random(77);
        Data data = Build(rng, 4, 700, 4);
        for (ulong readSeq = 0; readSeq <= data.MaxSeq; readSeq += 37)
        {
            var expected = Expected(data, readSeq, null, null).Select(e => IterTestData.Text(e.Key) + "=" + e.Value).ToList();
            using var it = new DbIterator(data.Open(), readSeq, rangeDelAggregator: data.Aggregator(readSeq), maxSequentialSkip: 1);
            var forward = new List<string>();
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
                forward.Add(IterTestData.Text(it.Key) + "=" + IterTestData.Text(it.Value));
            }
            Assert.Equal(expected, forward);
            var backward = new List<string>();
            for (it.SeekToLast(); it.Valid; it.Prev())
            {
                backward.Add(IterTestData.Text(it.Key) + "=" + IterTestData.Text(it.Value));
            }
            backward.Reverse();
            Assert.Equal(expected, backward);
        }
    }
}
