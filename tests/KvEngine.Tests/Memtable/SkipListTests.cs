using KvEngine.Format;
using KvEngine.Memtable;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Memtable;

public unsafe class SkipListTests
{
    private static readonly ValueType[] s_pointTypes =
        [ValueType.Value, ValueType.Deletion, ValueType.Merge, ValueType.SingleDeletion];

    internal static byte[] RandomInternalKey(Random rnd)
    {
        var user = new byte[rnd.Next(0, 6)];
        for (int i = 0; i < user.Length; i++)
        {
            user[i] = (byte)rnd.Next(0, 4); // small alphabet: many shared prefixes and equal user keys
        }
        ulong seq = rnd.Next(3) == 0 ? (ulong)rnd.Next(0, 8) : (ulong)rnd.NextInt64(0, (long)InternalKeys.MaxSequenceNumber);
        return InternalKeys.Create(user, seq, s_pointTypes[rnd.Next(s_pointTypes.Length)]);
    }

    private static int LowerBound(byte[][] sorted, byte[] key)
    {
        int i = Array.BinarySearch(sorted, key, InternalKeyComparer.Instance);
        return i >= 0 ? i : ~i;
    }

    private static byte[]? KeyOrNull(byte* entry) => entry == null ? null : MemTableEntry.InternalKey(entry).ToArray();

    [Theory]
    [InlineData(1, true)]
    [InlineData(2, true)]
    [InlineData(3, true)]
    [InlineData(4, false)]
    [InlineData(5, false)]
    public void MatchesSortedModel(int seed, bool linkWords)
    {
        var rnd = new Random(seed);
        using var arena = new Arena(64 << 10);
        var list = new SkipList(arena, seed: (ulong)seed, linkWords: linkWords);
        Assert.Equal(linkWords, list.HasLinkWords);
        var model = new SortedDictionary<byte[], byte[]>(InternalKeyComparer.Instance);

        Assert.True(list.First() == null && list.FindLast() == null);
        for (int round = 0; round < 4; round++)
        {
            for (int i = 0; i < 5000; i++)
            {
                byte[] key = RandomInternalKey(rnd);
                var value = new byte[rnd.Next(0, 20)];
                rnd.NextBytes(value);
                bool fresh = !model.ContainsKey(key);
                Assert.Equal(fresh, list.Insert(key, value));
                if (fresh)
                {
                    model.Add(key, value);
                }
            }
            CheckAgainstModel(list, model, rnd);
        }
        Assert.True(model.Count > 15000);
        Assert.InRange(list.Height, 2, SkipList.DefaultMaxHeight);
    }

    [Fact]
    public void WithoutLinkWordsHeightOneNodesTakeFourBytesLess()
    {
        // Same seed, same heights: the list without link words saves its 4-byte link on each
        // height-1 node (an entry of 4 + 8 + 2 + 2 = 16 bytes: 24-byte nodes with links, 20 without)
        // and nothing on taller ones, less the 4 bytes of padding a taller node (8-byte aligned)
        // needs after an odd run of 20-byte ones: between 2 and 3 bytes an entry with 3 in 4 nodes
        // of height 1 (8-byte links would save 6 an entry; no saving, 0).
        using var withArena = new Arena(1 << 20);
        using var withoutArena = new Arena(1 << 20);
        var with = new SkipList(withArena, seed: 9);
        var without = new SkipList(withoutArena, seed: 9, linkWords: false);
        long withStart = withArena.MemoryUsage;
        long withoutStart = withoutArena.MemoryUsage;
        var key = new byte[4];
        const int N = 20_000;
        for (int i = 0; i < N; i++)
        {
            System.Buffers.Binary.BinaryPrimitives.WriteInt32BigEndian(key, (i * 7919) % N);
            byte[] ikey = InternalKeys.Create(key, (ulong)i, ValueType.Value);
            Assert.True(with.Insert(ikey, [1, 2]));
            Assert.True(without.Insert(ikey, [1, 2]));
        }
        long saved = (withArena.MemoryUsage - withStart) - (withoutArena.MemoryUsage - withoutStart);
        Assert.Equal(0, saved % 4);
        Assert.InRange(saved, N * 2L, N * 3L);
        Assert.Equal(with.Height, without.Height);
        var a = new SkipList.Iterator(with);
        var b = new SkipList.Iterator(without);
        int count = 0;
        for (a.SeekToFirst(), b.SeekToFirst(); a.Valid; a.Next(), b.Next(), count++)
        {
            Assert.True(b.Valid);
            Assert.True(a.Key.SequenceEqual(b.Key));
        }
        Assert.False(b.Valid);
        Assert.Equal(N, count);
    }

    [Fact]
    public void SequentialAndReverseInsertsUseAndRepairTheSplice()
    {
        using var arena = new Arena();
        var list = new SkipList(arena);
        var model = new SortedDictionary<byte[], byte[]>(InternalKeyComparer.Instance);
        var key = new byte[4];
        for (int i = 0; i < 3000; i++)
        {
            // ascending runs, then a descending run, then interleaved
            int k = i < 1000 ? i * 3 : i < 2000 ? 10000 - i : (i * 7919) % 9000;
            System.Buffers.Binary.BinaryPrimitives.WriteInt32BigEndian(key, k);
            byte[] ikey = InternalKeys.Create(key, (ulong)i, ValueType.Value);
            Assert.True(list.Insert(ikey, key));
            model.Add(ikey, (byte[])key.Clone());
        }
        CheckAgainstModel(list, model, new Random(5));
    }

    private static void CheckAgainstModel(SkipList list, SortedDictionary<byte[], byte[]> model, Random rnd)
    {
        byte[][] keys = model.Keys.ToArray();

        var it = new SkipList.Iterator(list);
        it.SeekToFirst();
        foreach (var (key, value) in model)
        {
            Assert.True(it.Valid);
            Assert.True(it.Key.SequenceEqual(key));
            Assert.True(it.Value.SequenceEqual(value));
            it.Next();
        }
        Assert.False(it.Valid);

        it.SeekToLast();
        for (int i = keys.Length - 1; i >= 0; i--)
        {
            Assert.True(it.Valid);
            Assert.True(it.Key.SequenceEqual(keys[i]));
            it.Prev();
        }
        Assert.False(it.Valid);

        for (int probe = 0; probe < 1000; probe++)
        {
            byte[] target = probe % 3 == 0 ? keys[rnd.Next(keys.Length)] : RandomInternalKey(rnd);
            int lb = LowerBound(keys, target);
            bool exact = lb < keys.Length && InternalKeyComparer.Compare(keys[lb], target) == 0;
            Assert.Equal(exact, list.Contains(target));

            byte[]? ge = lb < keys.Length ? keys[lb] : null;
            byte[]? lt = lb > 0 ? keys[lb - 1] : null;
            byte[]? le = exact ? keys[lb] : lt;
            Assert.Equal(ge, KeyOrNull(list.FindGreaterOrEqual(target)));
            Assert.Equal(lt, KeyOrNull(list.FindLessThan(target)));
            Assert.Equal(le, KeyOrNull(list.FindLessOrEqual(target)));

            it.Seek(target);
            Assert.Equal(ge, it.Valid ? it.Key.ToArray() : null);
            if (it.Valid)
            {
                it.Prev();
                Assert.Equal(lt, it.Valid ? it.Key.ToArray() : null);
            }
            it.SeekForPrev(target);
            Assert.Equal(le, it.Valid ? it.Key.ToArray() : null);
            if (it.Valid)
            {
                it.Next();
                int after = exact ? lb + 1 : lb;
                Assert.Equal(after < keys.Length ? keys[after] : null, it.Valid ? it.Key.ToArray() : null);
            }
        }
        Assert.Equal(keys[^1], KeyOrNull(list.FindLast()));
        Assert.Equal(keys[0], KeyOrNull(list.First()));
    }

    [Fact]
    public void HeightsFollowTheBranchingFactor()
    {
        using var arena = new Arena();
        var list = new SkipList(arena, maxHeight: 4, branching: 2);
        for (int i = 0; i < 2000; i++)
        {
            list.Insert(InternalKeys.Create(BitConverter.GetBytes(i), 1, ValueType.Value), default);
        }
        Assert.Equal(4, list.Height); // 2000 nodes at p = 1/2 reach the cap
        Assert.Throws<ArgumentOutOfRangeException>(() => new SkipList(arena, maxHeight: 0));
        Assert.Throws<ArgumentOutOfRangeException>(() => new SkipList(arena, branching: 1));
    }
}
