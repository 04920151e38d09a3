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
        byte* big = arena.Allocate(Arena.MinBlockSize); // > block / 4
        Assert.Equal(allocatedBefore + Arena.MinBlockSize, arena.AllocatedBytes);
        byte* b = arena.Allocate(16);
        Assert.True(a - 16 == b, "small allocations continue in the current block");
        Assert.True(big + Arena.MinBlockSize <= a - 16 || big >= a + 16);
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
}
