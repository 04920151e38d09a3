using KvEngine.Db;
using KvEngine.Db.Read;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Tests.Iterators;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Db;

public class DbIteratorTests
{
    private static (byte[] Key, byte[] Value) E(string userKey, ulong seq, ValueType type, string value = "") =>
        (InternalKeys.Create(IterTestData.Bytes(userKey), seq, type), IterTestData.Bytes(value));

    private static List<string> ScanForward(DbIterator it)
    {
        var result = new List<string>();
        for (it.SeekToFirst(); it.Valid; it.Next())
        {
            result.Add(IterTestData.Text(it.Key) + "=" + IterTestData.Text(it.Value));
        }
        return result;
    }

    private static List<string> ScanBackward(DbIterator it)
    {
        var result = new List<string>();
        for (it.SeekToLast(); it.Valid; it.Prev())
        {
            result.Add(IterTestData.Text(it.Key) + "=" + IterTestData.Text(it.Value));
        }
        result.Reverse();
        return result;
    }

    [Fact]
    public void HidesOldVersionsDeletionsAndFutureEntries()
    {
        var source = new VectorIterator(
        [
            E("a", 5, ValueType.Value, "a5"), E("a", 3, ValueType.Value, "a3"),
            E("b", 6, ValueType.Deletion), E("b", 2, ValueType.Value, "b2"),
            E("c", 9, ValueType.Value, "c9"),
            E("d", 4, ValueType.SingleDeletion), E("d", 1, ValueType.Value, "d1"),
            E("e", 0, ValueType.Value, "e0"),
        ]);
        using var it = new DbIterator(source, 7);
        Assert.Equal(["a=a5", "e=e0"], ScanForward(it));
        Assert.Equal(["a=a5", "e=e0"], ScanBackward(it));
        using var old = new DbIterator(new VectorIterator(
        [
            E("a", 5, ValueType.Value, "a5"), E("a", 3, ValueType.Value, "a3"),
            E("b", 6, ValueType.Deletion), E("b", 2, ValueType.Value, "b2"),
            E("c", 9, ValueType.Value, "c9"),
        ]), 3);
        Assert.Equal(["a=a3", "b=b2"], ScanForward(old));
        Assert.Equal(["a=a3", "b=b2"], ScanBackward(old));
    }

    [Fact]
    public void BoundsStopIterationAndClampSeeks()
    {
        var entries = new[] { "a", "b", "c", "d", "e" }.Select((k, i) => E(k, (ulong)i + 1, ValueType.Value, k)).ToList();
        using var it = new DbIterator(new VectorIterator(entries), 100, IterTestData.Bytes("b"), IterTestData.Bytes("d"));
        Assert.Equal(["b=b", "c=c"], ScanForward(it));
        Assert.Equal(["b=b", "c=c"], ScanBackward(it));
        it.Seek("a"u8);
        Assert.Equal("b", IterTestData.Text(it.Key));
        it.Seek("d"u8);
        Assert.False(it.Valid);
        it.SeekForPrev("z"u8);
        Assert.Equal("c", IterTestData.Text(it.Key));
        it.Next();
        Assert.False(it.Valid);
        it.SeekForPrev("a"u8);
        Assert.False(it.Valid);
        it.Seek("c"u8);
        it.Prev();
        Assert.Equal("b", IterTestData.Text(it.Key));
        it.Prev();
        Assert.False(it.Valid);
        Assert.Throws<InvalidOperationException>(() => it.Key.Length);
        Assert.Throws<InvalidOperationException>(() => it.Next());
    }

    [Fact]
    public void SeekingToTheIteratorsOwnKeyIsStable()
    {
        var entries = new[] { "a", "b", "c" }.SelectMany((k, i) => new[]
        {
            E(k, (ulong)(10 * i + 2), ValueType.Value, k + "new"), E(k, (ulong)(10 * i + 1), ValueType.Value, k + "old"),
        }).ToList();
        using var it = new DbIterator(new VectorIterator(entries), 100);
        it.SeekToLast();
        it.Prev(); // reverse: Key is held in the iterator's own buffer
        it.Seek(it.Key);
        Assert.Equal("b=bnew", IterTestData.Text(it.Key) + "=" + IterTestData.Text(it.Value));
        it.SeekForPrev(it.Key); // forward: Key points into the source
        Assert.Equal("b=bnew", IterTestData.Text(it.Key) + "=" + IterTestData.Text(it.Value));
        it.SeekForPrev(it.Key);
        Assert.Equal("b=bnew", IterTestData.Text(it.Key) + "=" + IterTestData.Text(it.Value));
    }

    [Fact]
    public void MergeWithoutAnOperatorIsRejected()
    {
        List<(byte[] Key, byte[] Value)> entries =
        [
            E("a", 1, ValueType.Value, "a1"),
            E("m", 8, ValueType.Merge, "+1"), E("m", 4, ValueType.Value, "m4"), E("m", 3, ValueType.Merge, "+2"),
            E("z", 1, ValueType.Value, "z1"),
        ];
        using (var it = new DbIterator(new VectorIterator(entries), 10))
        {
            it.SeekToFirst();
            Assert.StartsWith("merge_operator is not properly initialized", Assert.Throws<KvException>(() => it.Next()).Message, StringComparison.Ordinal);
            Assert.False(it.Valid);
            it.SeekToLast();
            Assert.Throws<KvException>(() => it.Prev());
            Assert.Throws<KvException>(() => it.Seek("m"u8));
            Assert.Throws<KvException>(() => it.SeekForPrev("m"u8));
        }
        // Below the merge's sequence, the newest visible entry is a Value: the older Merge is hidden.
        using (var it = new DbIterator(new VectorIterator(entries), 5))
        {
            Assert.Equal(["a=a1", "m=m4", "z=z1"], ScanForward(it));
            Assert.Equal(["a=a1", "m=m4", "z=z1"], ScanBackward(it));
        }
        // A merge covered by a range tombstone is deleted, not an error.
        var agg = new TestRangeDelAggregator([(IterTestData.Bytes("m"), IterTestData.Bytes("n"), 9UL)], 10);
        using (var it = new DbIterator(new VectorIterator(entries), 10, rangeDelAggregator: agg))
        {
            Assert.Equal(["a=a1", "z=z1"], ScanForward(it));
            Assert.Equal(["a=a1", "z=z1"], ScanBackward(it));
        }
    }

    [Fact]
    public void MergesOperandsOverTheirBaseInBothDirections()
    {
        List<(byte[] Key, byte[] Value)> entries =
        [
            E("a", 1, ValueType.Value, "a1"),
            E("m", 9, ValueType.Merge, "+3"), E("m", 8, ValueType.Merge, "+1"), E("m", 4, ValueType.Value, "m4"), E("m", 3, ValueType.Merge, "+2"),
            E("n", 6, ValueType.Merge, "n6"), E("n", 5, ValueType.Deletion, ""), E("n", 2, ValueType.Value, "n2"),
            E("o", 7, ValueType.Merge, "o7"),
            E("z", 1, ValueType.Value, "z1"),
        ];
        var op = new StringAppendOperator();
        using (var it = new DbIterator(new VectorIterator(entries), 10, mergeOperator: op))
        {
            string[] all = ["a=a1", "m=m4,+1,+3", "n=n6", "o=o7", "z=z1"];
            Assert.Equal(all, ScanForward(it));
            Assert.Equal(all, ScanBackward(it));
            it.Seek("m"u8);
            it.Next();
            it.Prev(); // forward to reverse across a merged key
            Assert.Equal("m=m4,+1,+3", IterTestData.Text(it.Key) + "=" + IterTestData.Text(it.Value));
            it.SeekForPrev("n"u8);
            it.Next(); // reverse to forward
            Assert.Equal("o=o7", IterTestData.Text(it.Key) + "=" + IterTestData.Text(it.Value));
            it.Seek("m"u8);
            it.Prev(); // reverse from a forward merged position
            Assert.Equal("a=a1", IterTestData.Text(it.Key) + "=" + IterTestData.Text(it.Value));
        }
        using (var it = new DbIterator(new VectorIterator(entries), 8, mergeOperator: op))
        {
            Assert.Equal(["a=a1", "m=m4,+1", "n=n6", "o=o7", "z=z1"], ScanForward(it));
            Assert.Equal(["a=a1", "m=m4,+1", "n=n6", "o=o7", "z=z1"], ScanBackward(it));
        }
        // A tombstone at 5 over [m, o): m's base (4) is deleted, so its operands merge without it.
        var agg = new TestRangeDelAggregator([(IterTestData.Bytes("m"), IterTestData.Bytes("o"), 5UL)], 10);
        using (var it = new DbIterator(new VectorIterator(entries), 10, rangeDelAggregator: agg, mergeOperator: op))
        {
            Assert.Equal(["a=a1", "m=+1,+3", "n=n6", "o=o7", "z=z1"], ScanForward(it));
            Assert.Equal(["a=a1", "m=+1,+3", "n=n6", "o=o7", "z=z1"], ScanBackward(it));
        }
        // Operands only, the older ones under the tombstone: they are cut off in both directions.
        List<(byte[] Key, byte[] Value)> operandsOnly =
        [
            E("p", 9, ValueType.Merge, "p9"), E("p", 7, ValueType.Merge, "p7"), E("p", 4, ValueType.Merge, "p4"), E("p", 2, ValueType.Merge, "p2"),
        ];
        var cut = new TestRangeDelAggregator([(IterTestData.Bytes("p"), IterTestData.Bytes("q"), 5UL)], 10);
        using (var it = new DbIterator(new VectorIterator(operandsOnly), 10, rangeDelAggregator: cut, mergeOperator: op))
        {
            Assert.Equal(["p=p7,p9"], ScanForward(it));
            Assert.Equal(["p=p7,p9"], ScanBackward(it));
        }
    }

    [Fact]
    public void RangeTombstonesHideOnlyOlderEntries()
    {
        List<(byte[] Key, byte[] Value)> entries =
        [
            E("a", 1, ValueType.Value, "a1"), E("b", 7, ValueType.Value, "b7"), E("b", 2, ValueType.Value, "b2"),
            E("c", 3, ValueType.Value, "c3"), E("d", 1, ValueType.Value, "d1"),
        ];
        var tombstones = new[] { (IterTestData.Bytes("b"), IterTestData.Bytes("d"), 5UL) };
        using (var it = new DbIterator(new VectorIterator(entries), 10, rangeDelAggregator: new TestRangeDelAggregator(tombstones, 10)))
        {
            Assert.Equal(["a=a1", "b=b7", "d=d1"], ScanForward(it));
            Assert.Equal(["a=a1", "b=b7", "d=d1"], ScanBackward(it));
        }
        using (var it = new DbIterator(new VectorIterator(entries), 6, rangeDelAggregator: new TestRangeDelAggregator(tombstones, 6)))
        {
            Assert.Equal(["a=a1", "d=d1"], ScanForward(it));
        }
        using (var it = new DbIterator(new VectorIterator(entries), 4, rangeDelAggregator: new TestRangeDelAggregator(tombstones, 4)))
        {
            Assert.Equal(["a=a1", "b=b2", "c=c3", "d=d1"], ScanForward(it));
        }
    }

    // Many hidden versions of one key must cost a reseek, not a step per version.
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void ManyHiddenVersionsCostABoundedNumberOfMoves(bool olderAreDeletions)
    {
        ValueType oldType = olderAreDeletions ? ValueType.Deletion : ValueType.Value;
        var entries = new List<(byte[] Key, byte[] Value)> { E("a", 1, ValueType.Value, "a") };
        for (ulong s = 1; s <= 2000; s++)
        {
            // 1000 versions newer than the snapshot (seq 1002..2001), the newest visible Value (1001),
            // then 999 older ones.
            entries.Add(E("k", s + 1, s < 1000 ? oldType : ValueType.Value, "k" + (s + 1)));
        }
        entries.Add(E("z", 1, ValueType.Value, "z"));
        var probe = new ProbeIterator(new VectorIterator(entries));
        using var it = new DbIterator(probe, 1001);
        string expectedK = "k=k1001";

        it.Seek("k"u8);
        Assert.Equal(expectedK, IterTestData.Text(it.Key) + "=" + IterTestData.Text(it.Value));
        Assert.InRange(probe.Moves, 1, 30);

        int before = probe.Moves;
        it.Next();
        Assert.Equal("z", IterTestData.Text(it.Key));
        Assert.InRange(probe.Moves - before, 1, 30);

        before = probe.Moves;
        it.Prev();
        Assert.Equal(expectedK, IterTestData.Text(it.Key) + "=" + IterTestData.Text(it.Value));
        Assert.InRange(probe.Moves - before, 1, 30);

        before = probe.Moves;
        it.Prev();
        Assert.Equal("a", IterTestData.Text(it.Key));
        Assert.InRange(probe.Moves - before, 1, 30);

        before = probe.Moves;
        it.Next();
        Assert.Equal(expectedK, IterTestData.Text(it.Key) + "=" + IterTestData.Text(it.Value));
        it.Prev();
        Assert.Equal("a", IterTestData.Text(it.Key));
        Assert.InRange(probe.Moves - before, 1, 60);

        // The same answers with reseeking disabled, step by step.
        using var plain = new DbIterator(new VectorIterator(entries), 1001, maxSequentialSkip: int.MaxValue);
        Assert.Equal(["a=a", expectedK, "z=z"], ScanForward(plain));
        Assert.Equal(["a=a", expectedK, "z=z"], ScanBackward(plain));
    }

    [Fact]
    public void CorruptionFromTheSourcePropagatesAndInvalidates()
    {
        var rng = new Random(21);
        var entries = Enumerable.Range(0, 200)
            .Select(i => E(IterTestData.Text(IterTestData.RandomUserKey(rng)), (ulong)i + 1,
                i % 4 == 0 ? ValueType.Deletion : ValueType.Value, "v" + i))
            .ToList();
        for (int failAt = 1; failAt <= 60; failAt += 3)
        {
            var probe = new ProbeIterator(new VectorIterator(entries)) { FailAtMove = failAt };
            using var it = new DbIterator(new MergingIterator([probe, new VectorIterator([E("bb", 500, ValueType.Value, "x")])]), 150);
            var ex = Assert.Throws<KvCorruptionException>(() =>
            {
                for (int round = 0; round < 100; round++)
                {
                    for (it.SeekToFirst(); it.Valid; it.Next())
                    {
                    }
                    for (it.SeekToLast(); it.Valid; it.Prev())
                    {
                    }
                }
            });
            Assert.Contains("checksum", ex.Message, StringComparison.Ordinal);
            Assert.False(it.Valid);
            it.SeekToFirst(); // the fault was one-off: the iterator is usable again
            Assert.True(it.Valid);
        }
    }

    [Fact]
    public void MalformedEntriesRaiseCorruption()
    {
        var badType = new VectorIterator([E("a", 1, ValueType.Value, "a"), (InternalKeys.Create("b"u8, 2, (ValueType)0x5), [])]);
        using (var it = new DbIterator(badType, 10))
        {
            it.SeekToFirst();
            Assert.Throws<KvCorruptionException>(() => it.Next());
            Assert.False(it.Valid);
            Assert.Throws<KvCorruptionException>(() => it.SeekToLast());
        }
        // A key shorter than its trailer (VectorIterator cannot hold one).
        using (var it = new DbIterator(new ShortKeyIterator(), 10))
        {
            Assert.Throws<KvCorruptionException>(() => it.SeekToFirst());
            Assert.Throws<KvCorruptionException>(() => it.SeekToLast());
        }
    }

    [Fact]
    public void ArgumentsAreValidatedAndDisposalCascades()
    {
        var source = new VectorIterator([]);
        Assert.Throws<ArgumentOutOfRangeException>(() => new DbIterator(source, InternalKeys.MaxSequenceNumber + 1));
        Assert.Throws<ArgumentOutOfRangeException>(() => new DbIterator(source, 1, maxSequentialSkip: -1));
        var it = new DbIterator(source, InternalKeys.MaxSequenceNumber);
        it.SeekToFirst();
        Assert.False(it.Valid);
        it.Dispose();
        it.Dispose();
        Assert.True(source.Disposed);
        Assert.Throws<ObjectDisposedException>(() => it.SeekToFirst());
    }

    [Fact]
    public void SteadyStateMovesAllocateNothing()
    {
        var rng = new Random(4);
        var sources = Enumerable.Range(0, 4).Select(s => (InternalIterator)new VectorIterator(
            Enumerable.Range(0, 300).Select(i => E(IterTestData.Text(IterTestData.RandomUserKey(rng)), (ulong)(s * 1000 + i),
                i % 5 == 0 ? ValueType.Deletion : ValueType.Value, "value" + i)))).ToArray();
        using var it = new DbIterator(new MergingIterator(sources), 2500, maxSequentialSkip: 2);
        byte[] target = IterTestData.Bytes("b");
        void Work()
        {
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
            }
            for (it.SeekToLast(); it.Valid; it.Prev())
            {
            }
            it.Seek(target);
            for (int i = 0; i < 40 && it.Valid; i++)
            {
                if (i % 3 == 0)
                {
                    it.Prev();
                }
                else
                {
                    it.Next();
                }
            }
            it.SeekForPrev(target);
        }
        Work();
        Work();
        long before = GC.GetAllocatedBytesForCurrentThread();
        Work();
        Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
    }

    private sealed class ShortKeyIterator : InternalIterator
    {
        private bool _valid;

        public override bool Valid => _valid;

        public override ReadOnlySpan<byte> Key => new byte[] { 1, 2, 3 };

        public override ReadOnlySpan<byte> Value => [];

        public override void SeekToFirst() => _valid = true;

        public override void SeekToLast() => _valid = true;

        public override void Seek(ReadOnlySpan<byte> target) => _valid = true;

        public override void SeekForPrev(ReadOnlySpan<byte> target) => _valid = true;

        public override void Next() => _valid = false;

        public override void Prev() => _valid = false;
    }
}
