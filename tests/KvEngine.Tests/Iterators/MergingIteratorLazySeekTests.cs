using KvEngine.Format;
using KvEngine.Iterators;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Iterators;

/// <summary>
/// The lazy Seek of a newest-first <see cref="MergingIterator"/>: a seek that lands on the target's
/// user key in a child leaves the older children unpositioned, and every later move gives exactly
/// the merged order of an eager merger.
/// </summary>
public class MergingIteratorLazySeekTests
{
    // A source with a filter over its user keys: exact, or with every key of the falsePositive set passing too.
    private sealed class Filtered(ProbeIterator inner, HashSet<string> userKeys, Func<string, bool>? falsePositive = null) : InternalIterator
    {
        public int FilterChecks { get; private set; }

        public ProbeIterator Inner => inner;

        public override bool Valid => inner.Valid;

        public override ReadOnlySpan<byte> Key => inner.Key;

        public override ReadOnlySpan<byte> Value => inner.Value;

        public override bool MayContainUserKey(ReadOnlySpan<byte> userKey)
        {
            FilterChecks++;
            string k = Convert.ToHexString(userKey);
            return userKeys.Contains(k) || (falsePositive?.Invoke(k) ?? false);
        }

        public override void SeekToFirst() => inner.SeekToFirst();

        public override void SeekToLast() => inner.SeekToLast();

        public override void Seek(ReadOnlySpan<byte> target) => inner.Seek(target);

        public override void SeekForPrev(ReadOnlySpan<byte> target) => inner.SeekForPrev(target);

        public override void Next() => inner.Next();

        public override void Prev() => inner.Prev();
    }

    // Sources newest first: for one user key, a lower source index always holds the higher sequence.
    // With filters, sources 2, 4... have an exact filter and odd ones one that also passes about a third of other keys
    // (the test filter allocates: the allocation test goes without).
    private static (InternalIterator[] Sources, List<(byte[] Key, byte[] Value, int Source)> All, List<byte[]> UserKeys) Build(Random rng, int sources, int entries, bool filters = true)
    {
        var perSource = new List<(byte[] Key, byte[] Value)>[sources];
        for (int s = 0; s < sources; s++)
        {
            perSource[s] = [];
        }
        var all = new List<(byte[] Key, byte[] Value, int Source)>();
        var userKeys = new List<byte[]>();
        for (int i = 0; i < entries; i++)
        {
            int s = rng.Next(sources);
            byte[] userKey = userKeys.Count > 0 && rng.Next(3) == 0 ? userKeys[rng.Next(userKeys.Count)] : IterTestData.RandomUserKey(rng);
            userKeys.Add(userKey);
            ulong seq = (ulong)((sources - s) * 100_000 + i);
            byte[] key = InternalKeys.Create(userKey, seq, rng.Next(4) == 0 ? ValueType.Deletion : ValueType.Value);
            byte[] value = IterTestData.Bytes($"s{s}v{i}");
            perSource[s].Add((key, value));
            all.Add((key, value, s));
        }
        all.Sort(IterTestData.CompareEntries);
        var result = new InternalIterator[sources];
        for (int s = 0; s < sources; s++)
        {
            var probe = new ProbeIterator(new VectorIterator(perSource[s]));
            var keys = perSource[s].Select(e => Convert.ToHexString(InternalKeys.UserKey(e.Key))).ToHashSet();
            result[s] = !filters ? probe : (s % 2) switch
            {
                0 when s > 0 => new Filtered(probe, keys),
                1 => new Filtered(probe, keys, k => k.Length % 3 == 1),
                _ => probe,
            };
        }
        return (result, all, userKeys);
    }

    [Theory]
    [InlineData(1, 2, 200)]
    [InlineData(2, 4, 400)]
    [InlineData(3, 7, 600)]
    public void MatchesAnEagerMergerUnderRandomOperations(int seed, int sources, int entries)
    {
        var rng = new Random(seed);
        var (probes, all, userKeys) = Build(rng, sources, entries);
        using var lazy = new MergingIterator(probes, newestFirst: true);
        using var eager = new MergingIterator(all.GroupBy(e => e.Source).Select(g => (InternalIterator)new VectorIterator(g.Select(e => (e.Key, e.Value)))).ToArray());
        int deferredSeeks = 0;
        for (int op = 0; op < 4000; op++)
        {
            int r = rng.Next(100);
            string what;
            if (r < 35)
            {
                // Mostly targets on stored user keys (at their newest sequence or below), some anywhere.
                byte[] userKey = rng.Next(4) == 0 ? IterTestData.RandomUserKey(rng, target: true) : userKeys[rng.Next(userKeys.Count)];
                byte[] t = InternalKeys.Create(userKey, rng.Next(5) == 0 ? (ulong)rng.Next(1, sources * 100_000) : InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek);
                what = "Seek " + IterTestData.Describe(t);
                lazy.Seek(t);
                eager.Seek(t);
                if (lazy.DeferredChildCount > 0)
                {
                    deferredSeeks++;
                    if (rng.Next(4) == 0)
                    {
                        // A range-deletion skip to the seek target itself moves nothing but must position the deferred children.
                        what += " + SkipChildren";
                        lazy.SkipChildren(1, t);
                    }
                }
            }
            else if (r < 40)
            {
                what = "SeekToFirst";
                lazy.SeekToFirst();
                eager.SeekToFirst();
            }
            else if (r < 45)
            {
                byte[] t = IterTestData.RandomSeekTarget(rng, (ulong)(sources * 100_000));
                what = "SeekForPrev " + IterTestData.Describe(t);
                lazy.SeekForPrev(t);
                eager.SeekForPrev(t);
            }
            else if (!eager.Valid)
            {
                continue;
            }
            else if (r < 80)
            {
                what = "Next";
                lazy.Next();
                eager.Next();
            }
            else
            {
                what = "Prev";
                lazy.Prev();
                eager.Prev();
            }
            Assert.True(eager.Valid == lazy.Valid, $"op {op} {what}: valid {lazy.Valid}, expected {eager.Valid}");
            if (eager.Valid)
            {
                Assert.True(eager.Key.SequenceEqual(lazy.Key), $"op {op} {what}: key {IterTestData.Describe(lazy.Key)}, expected {IterTestData.Describe(eager.Key)}");
                Assert.Equal(IterTestData.Text(eager.Value), IterTestData.Text(lazy.Value));
            }
        }
        Assert.True(deferredSeeks > 50, $"only {deferredSeeks} seeks deferred a child");
    }

    [Fact]
    public void ChildrenWhoseFilterExcludesTheKeyAreNotSoughtWhenAnotherHoldsIt()
    {
        byte[] a = IterTestData.Bytes("a");
        byte[] b = IterTestData.Bytes("b");
        byte[] c = IterTestData.Bytes("c");
        var newest = new Filtered(new ProbeIterator(new VectorIterator([(InternalKeys.Create(c, 30, ValueType.Value), IterTestData.Bytes("c30"))])), [Convert.ToHexString(c)]);
        var middle = new Filtered(new ProbeIterator(new VectorIterator([(InternalKeys.Create(b, 20, ValueType.Value), IterTestData.Bytes("b20"))])), [Convert.ToHexString(b)]);
        var oldest = new Filtered(new ProbeIterator(new VectorIterator([(InternalKeys.Create(a, 10, ValueType.Value), IterTestData.Bytes("a10")), (InternalKeys.Create(b, 10, ValueType.Value), IterTestData.Bytes("b10"))])),
            [Convert.ToHexString(a), Convert.ToHexString(b)]);
        using var merger = new MergingIterator([newest, middle, oldest], newestFirst: true);

        // "b": the newest child's filter excludes it, the middle one holds it; only the middle one is sought.
        merger.Seek(InternalKeys.Create(b, InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek));
        Assert.Equal("b20", IterTestData.Text(merger.Value));
        Assert.Equal(2, merger.DeferredChildCount);
        Assert.Equal((0, 1, 0), (newest.Inner.Seeks, middle.Inner.Seeks, oldest.Inner.Seeks));
        merger.Next();
        Assert.Equal("b10", IterTestData.Text(merger.Value));
        merger.Next();
        Assert.Equal("c30", IterTestData.Text(merger.Value)); // the passed-over newest child, positioned by Next
        merger.Next();
        Assert.False(merger.Valid);

        // "bb" is nowhere: the children passed over by their filters are sought after all, for the next key.
        merger.Seek(InternalKeys.Create(IterTestData.Bytes("bb"), InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek));
        Assert.Equal(0, merger.DeferredChildCount);
        Assert.Equal("c30", IterTestData.Text(merger.Value));
    }

    [Fact]
    public void ASeekThatLandsInTheNewestChildTouchesNoOlderOne()
    {
        byte[] a = IterTestData.Bytes("a");
        byte[] b = IterTestData.Bytes("b");
        var newest = new ProbeIterator(new VectorIterator([(InternalKeys.Create(b, 30, ValueType.Value), IterTestData.Bytes("new"))]));
        var middle = new ProbeIterator(new VectorIterator([(InternalKeys.Create(a, 20, ValueType.Value), IterTestData.Bytes("a20")), (InternalKeys.Create(b, 20, ValueType.Value), IterTestData.Bytes("b20"))]));
        var oldest = new ProbeIterator(new VectorIterator([(InternalKeys.Create(b, 10, ValueType.Value), IterTestData.Bytes("b10"))]));
        using var merger = new MergingIterator([newest, middle, oldest], newestFirst: true);

        merger.Seek(InternalKeys.Create(b, InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek));
        Assert.Equal("new", IterTestData.Text(merger.Value));
        Assert.Equal(2, merger.DeferredChildCount);
        Assert.Equal(0, middle.Seeks + oldest.Seeks);

        // Next positions the older children and walks the older versions in order.
        merger.Next();
        Assert.Equal("b20", IterTestData.Text(merger.Value));
        merger.Next();
        Assert.Equal("b10", IterTestData.Text(merger.Value));
        merger.Next();
        Assert.False(merger.Valid);

        // Prev after a lazy seek repositions every child backwards: "a" of the middle child comes first.
        merger.Seek(InternalKeys.Create(b, InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek));
        merger.Prev();
        Assert.Equal("a20", IterTestData.Text(merger.Value));

        // A merger not declared newest first seeks every child.
        var eagerOld = new ProbeIterator(new VectorIterator([(InternalKeys.Create(b, 10, ValueType.Value), IterTestData.Bytes("b10"))]));
        using var eager = new MergingIterator([new VectorIterator([(InternalKeys.Create(b, 30, ValueType.Value), IterTestData.Bytes("new"))]), eagerOld]);
        eager.Seek(InternalKeys.Create(b, InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek));
        Assert.Equal(1, eagerOld.Seeks);
        Assert.Equal(0, eager.DeferredChildCount);
    }

    [Fact]
    public void LazySeeksAndTheirNextsAllocateNothing()
    {
        var rng = new Random(5);
        var (probes, _, userKeys) = Build(rng, 5, 400, filters: false);
        using var merger = new MergingIterator(probes, newestFirst: true);
        byte[][] targets = userKeys.Take(64).Select(k => InternalKeys.Create(k, InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek)).ToArray();
        void Work()
        {
            foreach (byte[] t in targets)
            {
                merger.Seek(t);
                for (int i = 0; i < 3 && merger.Valid; i++)
                {
                    merger.Next();
                }
            }
        }
        Work();
        long before = GC.GetAllocatedBytesForCurrentThread();
        Work();
        Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
    }
}
