using KvEngine.Format;
using ValueType = KvEngine.Format.ValueType;
using KvEngine.Iterators;

namespace KvEngine.Tests.Iterators;

public class MergingIteratorTests
{
    private sealed class Model
    {
        public Model(List<(byte[] Key, byte[] Value, int Source)> entries)
        {
            Entries = entries;
        }

        public List<(byte[] Key, byte[] Value, int Source)> Entries { get; }

        public int Pos { get; set; } = -1;

        public bool Valid => Pos >= 0 && Pos < Entries.Count;

        public void Seek(byte[] target) =>
            Pos = Entries.FindIndex(e => InternalKeyComparer.Compare(e.Key, target) >= 0) is int i and >= 0 ? i : Entries.Count;

        public void SeekForPrev(byte[] target) =>
            Pos = Entries.FindLastIndex(e => InternalKeyComparer.Compare(e.Key, target) <= 0);
    }

    // Builds `sources` random sorted sources. With shareSequences, the same internal key may appear in
    // several sources (ties are ordered by source index).
    private static (VectorIterator[] Sources, List<(byte[] Key, byte[] Value, int Source)> All, ulong MaxSeq) Build(
        Random rng, int sources, int entries, bool shareSequences)
    {
        var perSource = new List<(byte[] Key, byte[] Value)>[sources];
        for (int s = 0; s < sources; s++)
        {
            perSource[s] = [];
        }
        var all = new List<(byte[] Key, byte[] Value, int Source)>();
        ulong maxSeq = shareSequences ? 6UL : (ulong)entries;
        var seen = new HashSet<string>();
        for (int i = 0; i < entries; i++)
        {
            int s = rng.Next(sources);
            ulong seq = shareSequences ? (ulong)rng.Next(1, 7) : (ulong)(i + 1);
            ValueType type = rng.Next(4) == 0 ? ValueType.Deletion : ValueType.Value;
            byte[] key = InternalKeys.Create(IterTestData.RandomUserKey(rng), seq, type);
            if (!seen.Add(s + ":" + Convert.ToHexString(key)))
            {
                continue;
            }
            byte[] value = IterTestData.Bytes($"s{s}v{i}");
            perSource[s].Add((key, value));
            all.Add((key, value, s));
        }
        all.Sort(IterTestData.CompareEntries);
        var iters = perSource.Select(p => new VectorIterator(p)).ToArray();
        return (iters, all, maxSeq);
    }

    [Theory]
    [InlineData(1, 4, 300, false)]
    [InlineData(2, 1, 50, false)]
    [InlineData(3, 2, 200, true)]
    [InlineData(4, 7, 500, false)]
    [InlineData(5, 5, 400, true)]
    [InlineData(6, 12, 120, false)]
    [InlineData(7, 3, 5, true)]
    public void MatchesSortedModelUnderRandomOperations(int seed, int sources, int entries, bool shareSequences)
    {
        var rng = new Random(seed);
        var (iters, all, maxSeq) = Build(rng, sources, entries, shareSequences);
        using var merger = new MergingIterator(iters);
        var model = new Model(all);
        for (int op = 0; op < 3000; op++)
        {
            int r = rng.Next(100);
            string what;
            if (r < 5)
            {
                what = "SeekToFirst";
                merger.SeekToFirst();
                model.Pos = 0;
            }
            else if (r < 10)
            {
                what = "SeekToLast";
                merger.SeekToLast();
                model.Pos = all.Count - 1;
            }
            else if (r < 20)
            {
                byte[] t = IterTestData.RandomSeekTarget(rng, maxSeq);
                what = "Seek " + IterTestData.Describe(t);
                merger.Seek(t);
                model.Seek(t);
            }
            else if (r < 30)
            {
                byte[] t = IterTestData.RandomSeekTarget(rng, maxSeq);
                what = "SeekForPrev " + IterTestData.Describe(t);
                merger.SeekForPrev(t);
                model.SeekForPrev(t);
            }
            else if (!model.Valid)
            {
                continue;
            }
            else if (r < 65)
            {
                what = "Next";
                merger.Next();
                model.Pos++;
            }
            else
            {
                what = "Prev";
                merger.Prev();
                model.Pos--;
            }
            Assert.True(model.Valid == merger.Valid, $"op {op} {what}: valid {merger.Valid}, expected {model.Valid}");
            if (model.Valid)
            {
                var e = model.Entries[model.Pos];
                Assert.True(e.Key.AsSpan().SequenceEqual(merger.Key),
                    $"op {op} {what}: key {IterTestData.Describe(merger.Key)}, expected {IterTestData.Describe(e.Key)}");
                Assert.Equal(IterTestData.Text(e.Value), IterTestData.Text(merger.Value));
            }
        }
    }

    [Fact]
    public void FullScansBothWaysAndZigZag()
    {
        var rng = new Random(11);
        var (iters, all, _) = Build(rng, 5, 400, shareSequences: true);
        using var merger = new MergingIterator(iters);
        var forward = new List<string>();
        for (merger.SeekToFirst(); merger.Valid; merger.Next())
        {
            forward.Add(IterTestData.Text(merger.Value));
        }
        Assert.Equal(all.Select(e => IterTestData.Text(e.Value)), forward);
        var backward = new List<string>();
        for (merger.SeekToLast(); merger.Valid; merger.Prev())
        {
            backward.Add(IterTestData.Text(merger.Value));
        }
        backward.Reverse();
        Assert.Equal(forward, backward);

        // Next then Prev returns to the same entry everywhere (direction switch on every step).
        merger.SeekToFirst();
        for (int i = 0; i < all.Count - 1; i++)
        {
            merger.Next();
            merger.Prev();
            Assert.Equal(IterTestData.Text(all[i].Value), IterTestData.Text(merger.Value));
            merger.Next();
        }
    }

    [Fact]
    public void DisposesEveryChildOnce()
    {
        var children = new[]
        {
            new VectorIterator([(InternalKeys.Create("a"u8, 1, ValueType.Value), [1])]),
            new VectorIterator([]),
            new VectorIterator([(InternalKeys.Create("b"u8, 2, ValueType.Value), [2])]),
        };
        var merger = new MergingIterator(children);
        merger.SeekToFirst();
        merger.Dispose();
        merger.Dispose();
        Assert.All(children, c => Assert.True(c.Disposed));
        Assert.Throws<ObjectDisposedException>(() => merger.SeekToFirst());
    }

    [Fact]
    public void CreatePicksTheCheapestShape()
    {
        using (InternalIterator none = MergingIterator.Create([]))
        {
            Assert.IsType<EmptyIterator>(none);
        }
        var only = new VectorIterator([]);
        using (InternalIterator one = MergingIterator.Create([only]))
        {
            Assert.Same(only, one);
        }
        using InternalIterator two = MergingIterator.Create([new VectorIterator([]), new VectorIterator([])]);
        Assert.IsType<MergingIterator>(two);
        two.SeekToFirst();
        Assert.False(two.Valid);
        Assert.Throws<InvalidOperationException>(() => two.Next());
    }

    [Fact]
    public void CorruptionFromAChildPropagatesAndInvalidates()
    {
        var rng = new Random(5);
        for (int failAt = 1; failAt <= 40; failAt++)
        {
            var (iters, _, _) = Build(rng, 3, 60, shareSequences: false);
            var probe = new ProbeIterator(iters[1]) { FailAtMove = failAt };
            using var merger = new MergingIterator([iters[0], probe, iters[2]]);
            bool thrown = false;
            try
            {
                merger.SeekToFirst();
                for (int i = 0; i < 8 && merger.Valid; i++)
                {
                    merger.Next();
                }
                merger.SeekForPrev(InternalKeys.Create("b"u8, 30, ValueType.ValueTypeForSeek));
                for (int i = 0; i < 8 && merger.Valid; i++)
                {
                    merger.Prev();
                }
                merger.Seek(InternalKeys.Create("b"u8, 30, ValueType.ValueTypeForSeek));
                for (int i = 0; merger.Valid; i++)
                {
                    if (i % 3 == 2)
                    {
                        merger.Prev();
                    }
                    else
                    {
                        merger.Next();
                    }
                }
            }
            catch (KvCorruptionException e)
            {
                thrown = true;
                Assert.Contains("checksum", e.Message, StringComparison.Ordinal);
                Assert.False(merger.Valid);
            }
            Assert.True(thrown || probe.Moves < failAt, $"failAt {failAt}: no exception after {probe.Moves} moves");
        }
    }

    [Fact]
    public void MovesAllocateNothing()
    {
        var rng = new Random(3);
        var (iters, _, maxSeq) = Build(rng, 6, 500, shareSequences: false);
        using var merger = new MergingIterator(iters);
        byte[] target = IterTestData.RandomSeekTarget(rng, maxSeq);
        void Work()
        {
            for (merger.SeekToFirst(); merger.Valid; merger.Next())
            {
            }
            for (merger.SeekToLast(); merger.Valid; merger.Prev())
            {
            }
            merger.Seek(target);
            for (int i = 0; i < 50 && merger.Valid; i++)
            {
                if (i % 2 == 0)
                {
                    merger.Next();
                }
                else
                {
                    merger.Prev();
                    merger.Prev();
                    if (!merger.Valid)
                    {
                        merger.SeekToFirst();
                    }
                }
            }
            merger.SeekForPrev(target);
        }
        Work();
        Work();
        long before = GC.GetAllocatedBytesForCurrentThread();
        Work();
        Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
    }
}
