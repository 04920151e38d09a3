using System.Text;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Memtable;
using KvEngine.Tests.Util;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Memtable;

public unsafe class MemTableTests
{
    private static byte[] B(string s) => Encoding.ASCII.GetBytes(s);

    [Theory]
    [InlineData(11)]
    [InlineData(12)]
    public void IteratorMatchesSortedModel(int seed)
    {
        var rnd = new Random(seed);
        using var mem = new MemTable(new MemTableOptions(ArenaBlockSize: 16 << 10, RandomSeed: (ulong)seed));
        var model = new SortedDictionary<byte[], byte[]>(InternalKeyComparer.Instance);
        for (int i = 0; i < 20000; i++)
        {
            byte[] ikey = SkipListTests.RandomInternalKey(rnd);
            var value = new byte[rnd.Next(0, 300)];
            rnd.NextBytes(value);
            bool fresh = model.TryAdd(ikey, value);
            Assert.Equal(fresh, mem.Add(InternalKeys.Sequence(ikey), InternalKeys.Type(ikey), InternalKeys.UserKey(ikey), value));
        }
        Assert.Equal(model.Count, mem.NumEntries);
        Assert.Equal(model.Keys.Count(k => InternalKeys.Type(k) is ValueType.Deletion or ValueType.SingleDeletion), mem.NumDeletes);

        using var it = mem.NewIterator();
        Assert.False(it.Valid);
        it.SeekToFirst();
        foreach (var (key, value) in model)
        {
            Assert.True(it.Key.SequenceEqual(key));
            Assert.True(it.Value.SequenceEqual(value));
            it.Next();
        }
        Assert.False(it.Valid);
        Assert.Throws<InvalidOperationException>(() => it.Next());

        byte[][] keys = model.Keys.ToArray();
        it.SeekToLast();
        for (int i = keys.Length - 1; i >= keys.Length - 200; i--)
        {
            Assert.True(it.Key.SequenceEqual(keys[i]));
            it.Prev();
        }
        for (int probe = 0; probe < 2000; probe++)
        {
            byte[] target = SkipListTests.RandomInternalKey(rnd);
            int lb = Array.BinarySearch(keys, target, InternalKeyComparer.Instance);
            int ge = lb >= 0 ? lb : ~lb;
            int le = lb >= 0 ? lb : ~lb - 1;
            it.Seek(target);
            Assert.Equal(ge < keys.Length ? keys[ge] : null, it.Valid ? it.Key.ToArray() : null);
            it.SeekForPrev(target);
            Assert.Equal(le >= 0 ? keys[le] : null, it.Valid ? it.Key.ToArray() : null);
            if (it.Valid)
            {
                it.Prev();
                Assert.Equal(le >= 1 ? keys[le - 1] : null, it.Valid ? it.Key.ToArray() : null);
            }
        }
    }

    [Fact]
    public void TryGetPicksTheNewestVersionVisibleAtEachSnapshot()
    {
        var rnd = new Random(21);
        using var mem = new MemTable(new MemTableOptions(ArenaBlockSize: 64 << 10));
        const int Keys = 40;
        const int MaxSeq = 600;
        // versions[k][seq] = (type, value) for the sequences written to key k
        var versions = new SortedDictionary<ulong, (ValueType Type, byte[] Value)>[Keys];
        ValueType[] types = [ValueType.Value, ValueType.Value, ValueType.Merge, ValueType.Deletion, ValueType.SingleDeletion];
        for (int k = 0; k < Keys; k++)
        {
            versions[k] = [];
        }
        for (ulong seq = 1; seq <= MaxSeq; seq++)
        {
            int k = rnd.Next(Keys);
            ValueType type = types[rnd.Next(types.Length)];
            byte[] value = type is ValueType.Deletion or ValueType.SingleDeletion ? [] : B($"v{k}@{seq}");
            Assert.True(mem.Add(seq, type, B($"key{k:D3}"), value));
            versions[k][seq] = (type, value);
        }
        Assert.Equal(1UL, mem.FirstSequence);

        for (int k = 0; k < Keys + 2; k++) // two keys never written
        {
            byte[] user = B($"key{k:D3}");
            for (ulong snap = 0; snap <= MaxSeq + 1; snap++)
            {
                bool found = mem.TryGet(user, snap, out ValueType type, out ReadOnlySpan<byte> value);
                (ValueType Type, byte[] Value)? expected = null;
                if (k < Keys)
                {
                    foreach (var (seq, v) in versions[k])
                    {
                        if (seq <= snap)
                        {
                            expected = v;
                        }
                    }
                }
                Assert.Equal(expected.HasValue, found);
                if (found)
                {
                    Assert.Equal(expected!.Value.Type, type);
                    Assert.True(value.SequenceEqual(expected.Value.Value));
                }
            }
        }
        // A prefix of a stored key, and a key that extends one, are different user keys.
        Assert.False(mem.TryGet(B("key00"), MaxSeq, out _, out _));
        Assert.False(mem.TryGet(B("key0000"), MaxSeq, out _, out _));
    }

    [Fact]
    public void TryGetHandlesLongKeysAndEmptyKeys()
    {
        using var mem = new MemTable(Arena.MinBlockSize);
        var longKey = new byte[5000];
        new Random(1).NextBytes(longKey);
        var bigValue = new byte[3000];
        bigValue.AsSpan().Fill(7);
        Assert.True(mem.Add(5, ValueType.Value, longKey, bigValue));
        Assert.True(mem.Add(6, ValueType.Value, [], B("empty")));
        Assert.True(mem.TryGet(longKey, 5, out _, out ReadOnlySpan<byte> v));
        Assert.True(v.SequenceEqual(bigValue));
        Assert.False(mem.TryGet(longKey, 4, out _, out _));
        Assert.True(mem.TryGet([], InternalKeys.MaxSequenceNumber, out _, out v));
        Assert.True(v.SequenceEqual(B("empty")));
    }

    [Fact]
    public void RangeTombstonesLiveInTheirOwnTable()
    {
        using var mem = new MemTable();
        Assert.Null(mem.NewRangeTombstoneIterator());
        Assert.True(mem.IsEmpty);
        Assert.Equal(0UL, mem.FirstSequence);

        mem.Add(10, ValueType.RangeDeletion, B("b"), B("d"));
        mem.Add(11, ValueType.Value, B("c"), B("cv"));
        mem.Add(12, ValueType.RangeDeletion, B("a"), B("z"));
        mem.Add(13, ValueType.Deletion, B("e"), default);
        Assert.False(mem.Add(12, ValueType.RangeDeletion, B("a"), B("y")), "same start, seq and type is a duplicate");

        Assert.Equal(4, mem.NumEntries);
        Assert.Equal(2, mem.NumRangeDeletes);
        Assert.Equal(1, mem.NumDeletes);
        Assert.Equal(10UL, mem.FirstSequence);
        Assert.False(mem.IsEmpty);
        Assert.False(mem.TryGet(B("b"), 100, out _, out _));
        Assert.False(mem.TryGet(B("a"), 100, out _, out _));

        using (var points = mem.NewIterator())
        {
            points.SeekToFirst();
            Assert.Equal(InternalKeys.Create(B("c"), 11, ValueType.Value), points.Key.ToArray());
            points.Next();
            Assert.Equal(InternalKeys.Create(B("e"), 13, ValueType.Deletion), points.Key.ToArray());
            points.Next();
            Assert.False(points.Valid);
        }

        using var tombstones = mem.NewRangeTombstoneIterator();
        Assert.NotNull(tombstones);
        tombstones.SeekToFirst();
        Assert.Equal(InternalKeys.Create(B("a"), 12, ValueType.RangeDeletion), tombstones.Key.ToArray());
        Assert.Equal(B("z"), tombstones.Value.ToArray());
        tombstones.Next();
        Assert.Equal(InternalKeys.Create(B("b"), 10, ValueType.RangeDeletion), tombstones.Key.ToArray());
        Assert.Equal(B("d"), tombstones.Value.ToArray());
        tombstones.Next();
        Assert.False(tombstones.Valid);
    }

    [Fact]
    public void MemoryUsageGrowsMonotonicallyAndCoversTheEntries()
    {
        using var mem = new MemTable(Arena.MinBlockSize);
        var rnd = new Random(4);
        long last = mem.ApproximateMemoryUsage;
        long payload = 0;
        for (int i = 0; i < 3000; i++)
        {
            var key = new byte[rnd.Next(1, 40)];
            rnd.NextBytes(key);
            var value = new byte[i % 100 == 0 ? 5000 : rnd.Next(0, 100)]; // some bigger than a block
            mem.Add((ulong)i + 1, ValueType.Value, key, value);
            payload += key.Length + 8 + value.Length;
            long now = mem.ApproximateMemoryUsage;
            Assert.True(now > last);
            last = now;
        }
        Assert.True(last >= payload, $"{last} < {payload}");
        Assert.True(last < payload * 2, $"overhead too high: {last} for {payload}");
    }

    [Fact]
    public void ReferenceCountingFreesOnceAndCatchesMisuse()
    {
        var mem = new MemTable();
        mem.Add(1, ValueType.Value, B("k"), B("v"));
        Assert.Equal(1, mem.RefCount);
        mem.Ref();
        Assert.False(mem.Unref());

        InternalIterator it = mem.NewIterator();
        Assert.Equal(2, mem.RefCount);
        mem.Dispose();
        mem.Dispose(); // the creator's reference is dropped once
        Assert.Equal(1, mem.RefCount);
        it.SeekToFirst(); // the iterator keeps the memtable alive
        Assert.Equal(B("v"), it.Value.ToArray());
        Assert.True(mem.TryGet(B("k"), 1, out _, out _));
        it.Dispose();
        it.Dispose();
        Assert.Equal(0, mem.RefCount);
        Assert.False(it.Valid);
        Assert.Throws<ObjectDisposedException>(() => it.SeekToFirst());
        Assert.Throws<ObjectDisposedException>(() => mem.Ref());
        Assert.Throws<InvalidOperationException>(() => mem.Unref());
        Assert.Throws<ObjectDisposedException>(() => mem.TryGet(B("k"), 1, out _, out _));
        Assert.Throws<ObjectDisposedException>(() => mem.Add(2, ValueType.Value, B("k"), B("v")));
        Assert.Throws<ObjectDisposedException>(() => mem.NewIterator());
    }

    [Fact]
    public void RejectsBadArguments()
    {
        using var mem = new MemTable();
        Assert.Throws<ArgumentException>(() => mem.Add(1, ValueType.ValueTypeForSeek, B("k"), default));
        Assert.Throws<ArgumentException>(() => mem.Add(1, (ValueType)3, B("k"), default));
        Assert.Throws<ArgumentOutOfRangeException>(() => mem.Add(InternalKeys.MaxSequenceNumber + 1, ValueType.Value, B("k"), default));
        Assert.Throws<ArgumentOutOfRangeException>(() => mem.TryGet(B("k"), ulong.MaxValue, out _, out _));

        // Sizes are validated before any byte is read, so a span over unbacked memory is safe here.
        Assert.Throws<ArgumentException>(() => mem.Add(1, ValueType.Value, new ReadOnlySpan<byte>((void*)0x10000, int.MaxValue), default));
        Assert.Throws<ArgumentException>(() => mem.Add(1, ValueType.Value, B("k"), new ReadOnlySpan<byte>((void*)0x10000, int.MaxValue - 20)));
        Assert.True(mem.IsEmpty);

        int maxValue = MemTableEntry.MaxEncodedSize - 1 - 9 - 5; // key "k": varint 1 + 9 bytes; value varint 5
        Assert.True(MemTableEntry.TryGetEncodedSize(1, maxValue, out int size));
        Assert.Equal(MemTableEntry.MaxEncodedSize, size);
        Assert.False(MemTableEntry.TryGetEncodedSize(1, maxValue + 1, out _));
        Assert.False(MemTableEntry.TryGetEncodedSize(-1, 0, out _));
        Assert.Throws<ArgumentOutOfRangeException>(() => new MemTable(new MemTableOptions(MaxHeight: 40)));
    }

    [Fact]
    public void AddAndTryGetAllocateNothing()
    {
        using var mem = new MemTable(new MemTableOptions(ArenaBlockSize: 64 << 10));
        const int N = 10000;
        var keys = new byte[N][];
        for (int i = 0; i < N; i++)
        {
            keys[i] = B($"user-key-{i * 7919 % N:D6}");
        }
        var value = new byte[40];
        for (int i = 0; i < 1000; i++) // warm up: tiered JIT, statics
        {
            mem.Add((ulong)i + 1, ValueType.Value, keys[i], value);
            mem.TryGet(keys[i], ulong.MaxValue >> 8, out _, out _);
        }

        // A per-operation allocation shows in every round; a one-off allocation of the runtime
        // (a tier-up or class initializer reached late, under load) in at most one.
        int round = 0;
        AllocationAssert.Zero(
            () =>
            {
                for (int i = 0; i < N; i++)
                {
                    mem.Add((ulong)(2000 + (round * N) + i), ValueType.Value, keys[i], value);
                }
                int hits = 0;
                for (int i = 0; i < N; i++)
                {
                    if (mem.TryGet(keys[i], InternalKeys.MaxSequenceNumber, out _, out ReadOnlySpan<byte> v) && v.Length == value.Length)
                    {
                        hits++;
                    }
                }
                round++;
                if (hits != N) // not Assert.Equal: it allocates
                {
                    throw new InvalidOperationException($"{hits} of {N} keys found");
                }
            },
            "MemTable Add + TryGet",
            warmups: 0);
    }
}
