using KvEngine.Memory;
using KvEngine.Memtable;
using KvEngine.Tests.Memory;

namespace KvEngine.Tests.Memtable;

public unsafe class ArenaTests
{
    [Fact]
    public void AllocationsAreDisjointAlignedAndKeepTheirContents()
    {
        using var arena = new Arena(Arena.MinBlockSize);
        var rnd = new Random(7);
        var blocks = new List<(nint Ptr, int Size, byte Fill)>();
        long requested = 0;
        for (int i = 0; i < 5000; i++)
        {
            int size = rnd.Next(10) == 0 ? rnd.Next(1, 6000) : rnd.Next(1, 64);
            bool aligned = rnd.Next(2) == 0;
            byte* p = aligned ? arena.AllocateAligned(size) : arena.Allocate(size);
            if (aligned)
            {
                Assert.Equal(0, (long)p % Arena.Alignment);
            }
            byte fill = (byte)i;
            new Span<byte>(p, size).Fill(fill);
            blocks.Add(((nint)p, size, fill));
            requested += size;
        }
        foreach (var (ptr, size, fill) in blocks)
        {
            Assert.True(new ReadOnlySpan<byte>((byte*)ptr, size).IndexOfAnyExcept(fill) < 0);
        }
        Assert.True(arena.MemoryUsage >= requested);
        Assert.True(arena.AllocatedBytes >= arena.MemoryUsage);
    }

    [Fact]
    public void OversizedRequestGetsItsOwnBlockAndTheCurrentBlockContinues()
    {
        using var arena = new Arena(Arena.MinBlockSize);
        byte* a = arena.Allocate(16);
        long allocatedBefore = arena.AllocatedBytes;
        int big = Arena.SideMaxRequest + 1; // over a slot: a block of its own
        byte* own = arena.Allocate(big);
        Assert.Equal(allocatedBefore + NativeAllocator.UsableSize(big), arena.AllocatedBytes);
        byte* b = arena.Allocate(16);
        Assert.True(a - 16 == b, "small allocations continue in the current block");
        Assert.True(own + big <= b || own >= a + 16);
    }

    /// <summary>
    /// Requests over a quarter block and up to a slot share side blocks of four slots instead of
    /// taking a slot each (which would use up an arena of 4 KiB blocks after ~4,000 of them); the
    /// current block goes on serving small requests between them.
    /// </summary>
    [Fact]
    public void MediumRequestsShareSideBlocks()
    {
        using var arena = new Arena(Arena.MinBlockSize);
        byte* a = arena.AllocateAligned(16);
        const int Medium = 1100; // over a quarter of a 4 KiB block
        const int Count = 20_000; // 22 MB: five side blocks
        var ids = new List<(nint Ptr, uint Id)>();
        for (int i = 0; i < Count; i++)
        {
            byte* p = arena.AllocateAligned(Medium, Arena.IdUnitBytes, out uint id);
            new Span<byte>(p, Medium).Fill((byte)i);
            ids.Add(((nint)p, id));
        }
        byte* b = arena.AllocateAligned(16);
        Assert.True(b > a && b < a + Arena.MinBlockSize, "small allocations continue in the current block");
        int sideBlocks = (int)(((long)Count * Medium) / (Arena.SideBlockBytes - Medium)) + 1;
        Assert.Equal(2 + (sideBlocks * (Arena.SideBlockBytes / Arena.SlotBytes)), arena.SlotsUsed); // null slot, current block, side blocks
        Assert.False(arena.IdsMostlyUsed);
        for (int i = 0; i < Count; i++)
        {
            Assert.Equal(ids[i].Ptr, (nint)Arena.At(arena.Slots, ids[i].Id));
            Assert.True(new ReadOnlySpan<byte>((byte*)ids[i].Ptr, Medium).IndexOfAnyExcept((byte)i) < 0);
        }
    }

    [Fact]
    public void MemoryUsageNeverDecreasesAndCountsAbandonedTails()
    {
        using var arena = new Arena(Arena.MinBlockSize);
        var rnd = new Random(3);
        long last = arena.MemoryUsage;
        for (int i = 0; i < 3000; i++)
        {
            int size = rnd.Next(1, 1100);
            _ = rnd.Next(2) == 0 ? arena.Allocate(size) : arena.AllocateAligned(size);
            long now = arena.MemoryUsage;
            Assert.True(now >= last + size, $"usage {now} after {last} + {size}");
            last = now;
        }
    }

    [Fact]
    public void RejectsBadSizesAndUseAfterDispose()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new Arena(100));
        var arena = new Arena();
        Assert.Throws<ArgumentOutOfRangeException>(() => arena.Allocate(0));
        Assert.Throws<ArgumentOutOfRangeException>(() => arena.AllocateAligned(-1));
        _ = arena.Allocate(10);
        arena.Dispose();
        arena.Dispose(); // idempotent
        Assert.True(arena.IsDisposed);
        Assert.Throws<ObjectDisposedException>(() => arena.Allocate(1));
        Assert.Throws<ObjectDisposedException>(() => arena.AllocateAligned(8));
    }

    /// <summary>
    /// With huge pages, the first regular block and blocks of their own keep small pages (an
    /// idle memtable stays small); regular blocks after the first are advised as huge pages.
    /// </summary>
    [Fact]
    public void HugePagesBackRegularBlocksAfterTheFirst()
    {
        if (!PageMemory.IsSupported || PageMemory.HugePageSize == 0)
        {
            return; // no THP here: the arena uses plain mappings (covered by the other tests)
        }
        int blockSize = PageMemory.HugePageSize;
        using var arena = new Arena(blockSize, hugePages: true);
        byte* first = arena.AllocateAligned(64);
        byte* own = arena.AllocateAligned((blockSize / 4) + 8); // a block of its own
        var later = new List<nint>();
        for (int i = 0; i < 3 * blockSize / 4096; i++)
        {
            later.Add((nint)arena.AllocateAligned(4096));
        }
        *first = 1;
        *own = 1;
        Assert.DoesNotContain("hg", Smaps.VmFlags((nint)first));
        Assert.DoesNotContain("hg", Smaps.VmFlags((nint)own));
        nint last = later[^1];
        *(byte*)last = 1;
        Assert.True(last - (nint)first >= blockSize || (nint)first - last >= blockSize);
        Assert.Contains("hg", Smaps.VmFlags(last));
    }

    /// <summary>
    /// Zeroed requests: one that gets a block of its own takes a new mapping untouched (its pages
    /// become resident only where written: a hash index's buckets cost an idle memtable nothing),
    /// one inside a block is cleared.
    /// </summary>
    [Fact]
    public void ZeroedRequestsAreZeroAndAnOwnBlockIsResidentOnlyWhereTouched()
    {
        using var arena = new Arena(1 << 20);
        const int Large = 2 << 20;
        byte* own = arena.AllocateAlignedZeroed(Large);
        if (PageMemory.IsSupported)
        {
            Assert.Equal(0, (long)own % Environment.SystemPageSize);
            Assert.Equal(0, Smaps.ResidentPages((nint)own, Large));
            own[Large / 2] = 1;
            Assert.Equal(1, Smaps.ResidentPages((nint)own, Large));
            own[Large / 2] = 0;
        }
        Assert.True(new ReadOnlySpan<byte>(own, Large).IndexOfAnyExcept((byte)0) < 0);

        // Inside a block that reuses freed, dirty memory: one shard, so the freed slot comes back.
        using var allocator = new NativeAllocator(new NativeAllocatorOptions { Shards = 1, DebugChecks = false });
        NativeBuffer freed = allocator.Allocate(Arena.MinBlockSize);
        freed.Span.Fill(0xEE);
        nint address = (nint)freed.Pointer;
        freed.Dispose();
        using var small = new Arena(Arena.MinBlockSize, allocator);
        byte* zeroed = small.AllocateAlignedZeroed(512);
        Assert.Equal(address, (nint)zeroed); // the dirty slot, as the test means
        Assert.True(new ReadOnlySpan<byte>(zeroed, 512).IndexOfAnyExcept((byte)0) < 0);
    }

    /// <summary>
    /// Every id decodes to the address it was handed out with, and id + k / 4 to k bytes further,
    /// across regular blocks, blocks of their own and both alignments; id 0 decodes to null.
    /// </summary>
    [Fact]
    public void IdsDecodeToTheirAddresses()
    {
        using var arena = new Arena(Arena.MinBlockSize);
        Assert.True(Arena.At(arena.Slots, 0) == null);
        var rnd = new Random(11);
        var handed = new List<(nint Ptr, uint Id, int Size)>();
        for (int i = 0; i < 20_000; i++)
        {
            int size = rnd.Next(20) == 0 ? rnd.Next(Arena.MinBlockSize / 4, 3 * Arena.MinBlockSize) : rnd.Next(1, 200);
            if (rnd.Next(4) == 0)
            {
                _ = arena.Allocate(rnd.Next(1, 50)); // unaligned requests share the blocks
            }
            int alignment = rnd.Next(2) == 0 ? Arena.IdUnitBytes : Arena.Alignment;
            byte* p = arena.AllocateAligned(size, alignment, out uint id);
            Assert.Equal(0, (long)p % alignment);
            Assert.NotEqual(0u, id);
            handed.Add(((nint)p, id, size));
        }
        foreach (var (ptr, id, size) in handed)
        {
            Assert.Equal(ptr, (nint)Arena.At(arena.Slots, id));
            int last = (size - 1) & ~(Arena.IdUnitBytes - 1);
            Assert.Equal(ptr + last, (nint)Arena.At(arena.Slots, id + (uint)(last / Arena.IdUnitBytes)));
        }
    }

    /// <summary>
    /// An arena of small blocks would use up the 4,095 slots after 16 MiB: once a quarter of them are
    /// taken its regular blocks grow to a whole slot (4 MiB), so it still reaches most of the 16 GiB.
    /// </summary>
    [Fact]
    public void SmallBlocksGrowToASlotOnceAQuarterOfTheSlotsAreTaken()
    {
        using var arena = new Arena(Arena.MinBlockSize);
        while (arena.SlotsUsed <= Arena.SlotCount / 4)
        {
            _ = arena.AllocateAligned(1000, Arena.IdUnitBytes, out _);
        }
        long before = arena.AllocatedBytes;
        Assert.InRange(before, (Arena.SlotCount / 4) * (long)Arena.MinBlockSize, (Arena.SlotCount / 4) * 2L * Arena.MinBlockSize);
        int slots = arena.SlotsUsed;
        byte* a = null;
        while (arena.SlotsUsed == slots)
        {
            a = arena.AllocateAligned(1000, Arena.IdUnitBytes, out _);
        }
        Assert.Equal(before + Arena.SlotBytes, arena.AllocatedBytes);
        // The grown block takes 1000-byte requests thousands of times before the next one.
        for (int i = 0; i < 4000; i++)
        {
            _ = arena.AllocateAligned(1000, Arena.IdUnitBytes, out uint id);
            Assert.Equal(slots + 1, arena.SlotsUsed);
            Assert.True(Arena.At(arena.Slots, id) != null);
        }
    }

    /// <summary>Past the 16 GiB ids reach, a request throws and the arena stays usable.</summary>
    [Fact]
    public void RequestsPastTheIdsReachThrow()
    {
        if (!PageMemory.IsSupported)
        {
            return; // needs untouched mappings: blocks of 1.75 GiB that never become resident
        }
        using var arena = new Arena(Arena.MinBlockSize);
        const int Huge = 7 << 28; // the allocator's largest block: 448 slots
        int fitted = 0;
        Exception? error = null;
        while (error == null && fitted < Arena.SlotCount)
        {
            try
            {
                _ = arena.Allocate(Huge); // a block of its own, never touched
                fitted++;
            }
            catch (InvalidOperationException e)
            {
                error = e;
            }
        }
        Assert.NotNull(error);
        Assert.Equal((Arena.SlotCount - 1) / (Huge / Arena.SlotBytes), fitted);
        Assert.True(arena.IdsMostlyUsed);
        byte* p = arena.AllocateAligned(64, Arena.Alignment, out uint id); // the current block still serves small requests
        Assert.True(Arena.At(arena.Slots, id) == p);
    }
}
