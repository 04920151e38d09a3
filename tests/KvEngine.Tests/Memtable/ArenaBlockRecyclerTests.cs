using System.Text;
using KvEngine.Memory;
using KvEngine.Memtable;

using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Memtable;

public unsafe class ArenaBlockRecyclerTests
{
    private const int BlockSize = 64 << 10;

    /// <summary>
    /// Fills <paramref name="arena"/> with 1 KiB requests until it took <paramref name="blocks"/>
    /// new regular blocks; returns their addresses (a request that starts a block gets its start).
    /// </summary>
    private static HashSet<nint> FillBlocks(Arena arena, int blocks)
    {
        var bases = new HashSet<nint>();
        while (bases.Count < blocks)
        {
            long before = arena.AllocatedBytes;
            byte* p = arena.AllocateAligned(1024);
            new Span<byte>(p, 1024).Fill(0x5A);
            if (arena.AllocatedBytes != before)
            {
                bases.Add((nint)p);
            }
        }
        return bases;
    }

    [Fact]
    public void TheNextArenaTakesTheRetiredArenasBlocks()
    {
        var allocator = new NativeAllocator();
        using var recycler = new ArenaBlockRecycler(BlockSize, hugePages: false, capacityBytes: 64 * BlockSize);
        var retired = new Arena(BlockSize, allocator, recycler: recycler);
        HashSet<nint> first = FillBlocks(retired, 8);
        var filling = new Arena(BlockSize, allocator, recycler: recycler); // the consumer now
        long liveBefore = allocator.GetUsage().AllocatedBytes;
        retired.Dispose();
        Assert.Equal(8, recycler.SpareBlocks);
        Assert.Equal(8L * NativeAllocator.UsableSize(BlockSize), recycler.SpareBytes);
        // Kept, not freed: only the retired arena's slot table went back.
        Assert.Equal(liveBefore - NativeAllocator.UsableSize(Arena.SlotCount * sizeof(nint)), allocator.GetUsage().AllocatedBytes);

        long allocated = filling.AllocatedBytes;
        HashSet<nint> second = FillBlocks(filling, 8);
        Assert.Equal(0, recycler.SpareBlocks);
        Assert.Equal(8, second.Count(first.Contains)); // every block came back
        Assert.Equal(allocated + (8L * NativeAllocator.UsableSize(BlockSize)), filling.AllocatedBytes);
        filling.Dispose();
        recycler.Dispose();
        Assert.Equal(0, allocator.GetUsage().LiveAllocations);
    }

    /// <summary>
    /// Spares plus the consumer's blocks stay within the capacity: what does not fit is freed at
    /// once, and so is everything once the consumer itself is retired or the recycler disposed.
    /// </summary>
    [Fact]
    public void KeepsOnlyWhatTheConsumerCanStillTake()
    {
        var allocator = new NativeAllocator();
        int usable = NativeAllocator.UsableSize(BlockSize);
        using var recycler = new ArenaBlockRecycler(BlockSize, hugePages: false, capacityBytes: 6L * usable);
        var retired = new Arena(BlockSize, allocator, recycler: recycler);
        FillBlocks(retired, 8);
        var filling = new Arena(BlockSize, allocator, recycler: recycler);
        FillBlocks(filling, 2);
        long consumer = filling.AllocatedBytes;
        retired.Dispose();
        long expected = (6L * usable) - consumer;
        expected -= expected % usable;
        Assert.Equal(expected, recycler.SpareBytes);
        Assert.True(recycler.SpareBlocks < 8);

        var other = new Arena(BlockSize, allocator, recycler: null);
        FillBlocks(other, 2);
        other.Dispose(); // no recycler: its blocks are simply freed
        Assert.Equal(expected, recycler.SpareBytes);

        filling.Dispose(); // the consumer retired: nothing of it is kept
        Assert.Equal(expected, recycler.SpareBytes);
        recycler.Dispose();
        Assert.Equal(0, recycler.SpareBytes);
        Assert.Equal(0, allocator.GetUsage().LiveAllocations);
    }

    /// <summary>
    /// Spares go once the consumer allocated nothing between two looks an interval apart (its
    /// family stopped writing); looks closer together, or a consumer still filling, keep them.
    /// </summary>
    [Fact]
    public void IdleSparesAreFreedAfterAnIntervalWithoutAllocation()
    {
        var allocator = new NativeAllocator();
        using var recycler = new ArenaBlockRecycler(BlockSize, hugePages: false, capacityBytes: 64 * BlockSize);
        var retired = new Arena(BlockSize, allocator, recycler: recycler);
        FillBlocks(retired, 4);
        var filling = new Arena(BlockSize, allocator, recycler: recycler);
        retired.Dispose();
        Assert.Equal(4, recycler.SpareBlocks);

        Assert.Equal(0, recycler.TrimIfIdle(nowMs: 1000, intervalMs: 1000)); // first look: records
        FillBlocks(filling, 1); // still filling: takes a spare
        Assert.Equal(0, recycler.TrimIfIdle(nowMs: 2000, intervalMs: 1000));
        Assert.Equal(3, recycler.SpareBlocks);
        Assert.Equal(0, recycler.TrimIfIdle(nowMs: 2500, intervalMs: 1000)); // too soon: not a look
        Assert.Equal(3, recycler.SpareBlocks);
        long live = allocator.GetUsage().AllocatedBytes;
        Assert.Equal(3L * NativeAllocator.UsableSize(BlockSize), recycler.TrimIfIdle(nowMs: 3000, intervalMs: 1000));
        Assert.Equal(0, recycler.SpareBlocks);
        Assert.Equal(live - (3L * NativeAllocator.UsableSize(BlockSize)), allocator.GetUsage().AllocatedBytes);
        filling.Dispose();
        recycler.Dispose();
        Assert.Equal(0, allocator.GetUsage().LiveAllocations);
    }

    /// <summary>
    /// Writes inside the current block count as activity (the usage grows, not the blocks), and so
    /// does a switch to a new memtable whose usage happens to equal the old one's at the last look.
    /// </summary>
    [Fact]
    public void SmallWritesAndSwitchesAreNotIdleness()
    {
        var allocator = new NativeAllocator();
        using var recycler = new ArenaBlockRecycler(BlockSize, hugePages: false, capacityBytes: 64 * BlockSize);
        var retired = new Arena(BlockSize, allocator, recycler: recycler);
        FillBlocks(retired, 4);
        var filling = new Arena(BlockSize, allocator, recycler: recycler);
        filling.AllocateAligned(64);
        retired.Dispose();
        Assert.Equal(4, recycler.SpareBlocks); // the filling arena's first block came before them
        Assert.Equal(0, recycler.TrimIfIdle(nowMs: 1000, intervalMs: 1000));
        filling.AllocateAligned(64); // inside the current block: no new block
        Assert.Equal(0, recycler.TrimIfIdle(nowMs: 2000, intervalMs: 1000));
        Assert.Equal(4, recycler.SpareBlocks);

        // A new consumer with the same usage as the old one at the previous look: not idle.
        var next = new Arena(BlockSize, allocator, recycler: recycler);
        next.AllocateAligned(64);
        next.AllocateAligned(64);
        Assert.Equal(filling.MemoryUsage, next.MemoryUsage);
        Assert.Equal(0, recycler.TrimIfIdle(nowMs: 3000, intervalMs: 1000));
        Assert.Equal(3, recycler.SpareBlocks); // the new consumer took its first block from them
        Assert.True(recycler.TrimIfIdle(nowMs: 4000, intervalMs: 1000) > 0); // now idle
        next.Dispose();
        filling.Dispose();
        recycler.Dispose();
        Assert.Equal(0, allocator.GetUsage().LiveAllocations);
    }

    [Fact]
    public void ReturnsAfterDisposeAreFreed()
    {
        var allocator = new NativeAllocator();
        var recycler = new ArenaBlockRecycler(BlockSize, hugePages: false, capacityBytes: 64 * BlockSize);
        var retired = new Arena(BlockSize, allocator, recycler: recycler);
        FillBlocks(retired, 3);
        var filling = new Arena(BlockSize, allocator, recycler: recycler);
        recycler.Dispose();
        retired.Dispose();
        Assert.Equal(0, recycler.SpareBlocks);
        filling.Dispose();
        Assert.Equal(0, allocator.GetUsage().LiveAllocations);
    }

    /// <summary>An arena whose block size or page kind differs from the recycler's neither takes nor gives.</summary>
    [Fact]
    public void AnArenaOfAnotherBlockSizeIgnoresTheRecycler()
    {
        var allocator = new NativeAllocator();
        using var recycler = new ArenaBlockRecycler(BlockSize, hugePages: false, capacityBytes: 64 * BlockSize);
        var consumer = new Arena(BlockSize, allocator, recycler: recycler);
        var other = new Arena(2 * BlockSize, allocator, recycler: recycler);
        FillBlocks(other, 3);
        other.Dispose();
        Assert.Equal(0, recycler.SpareBlocks);
        consumer.Dispose();
    }

    /// <summary>
    /// A memtable built over recycled blocks reads back exactly what it was given: nothing in it
    /// relies on new memory being zero (with the allocator's debug checks, kept blocks are
    /// poisoned, so a reliance would show here).
    /// </summary>
    [Fact]
    public void AMemTableOverRecycledBlocksReadsBackItsEntries()
    {
        using var recycler = new ArenaBlockRecycler(BlockSize, hugePages: false, capacityBytes: 64 * BlockSize);
        var options = new MemTableOptions(ArenaBlockSize: BlockSize, HashIndexBuckets: 1024, Recycler: recycler);
        var rnd = new Random(11);
        MemTable? previous = null;
        for (int round = 0; round < 4; round++)
        {
            var mem = new MemTable(options);
            if (previous != null)
            {
                previous.Dispose(); // retired while the next one fills: its blocks become spares
                Assert.True(round == 0 || recycler.SpareBlocks > 0);
            }
            var model = new SortedDictionary<string, string>(StringComparer.Ordinal);
            for (int i = 0; i < 3000; i++)
            {
                string key = "k" + rnd.Next(2000).ToString("D5");
                string value = new string((char)('a' + (i % 26)), rnd.Next(1, 200));
                Assert.True(mem.Add((ulong)((round * 10000) + i + 1), ValueType.Value, Encoding.ASCII.GetBytes(key), Encoding.ASCII.GetBytes(value)));
                model[key] = value;
            }
            foreach (KeyValuePair<string, string> kv in model)
            {
                Assert.True(mem.TryGet(Encoding.ASCII.GetBytes(kv.Key), ulong.MaxValue >> 8, out ValueType type, out ReadOnlySpan<byte> value));
                Assert.Equal(ValueType.Value, type);
                Assert.Equal(kv.Value, Encoding.ASCII.GetString(value));
            }
            previous = mem;
        }
        previous!.Dispose();
    }
}
