using KvEngine.Db;
using KvEngine.Db.State;
using KvEngine.Memory;

namespace KvEngine.Tests.Memory;

/// <summary>
/// Page mappings and their huge-page variant: alignment, zeroed and writable memory, the kernel's
/// record of the advice (the VMA's "hg" flag in /proc/self/smaps), and the engine's rule for
/// when a memtable asks for huge pages.
/// </summary>
public unsafe class PageMemoryTests
{
    [Theory]
    [InlineData(2 << 20)]
    [InlineData(4 << 20)]
    [InlineData((3 << 20) + 4096)]
    public void HugePageMappingsAreAlignedAdvisedZeroedAndWritable(int length)
    {
        if (!PageMemory.IsSupported)
        {
            return; // not Linux with glibc: no mappings at all (NativeAllocator uses malloc)
        }
        byte* p = (byte*)PageMemory.MapHugePages((nuint)length);
        try
        {
            var span = new Span<byte>(p, length);
            Assert.True(span.IndexOfAnyExcept((byte)0) < 0);
            span.Fill(0x5A);
            Assert.Equal(0x5A, span[^1]);
            Assert.Equal(0, (long)p % Environment.SystemPageSize);
            if (PageMemory.HugePageSize > 0)
            {
                Assert.Equal(0, (long)p % PageMemory.HugePageSize);
                Assert.Contains("hg", Smaps.VmFlags((nint)p));
                Assert.Contains("hg", Smaps.VmFlags((nint)p + length - 1));
            }
        }
        finally
        {
            PageMemory.Unmap(p, (nuint)length);
        }
    }

    [Fact]
    public void MappingsBelowOneHugePageAreNotAdvised()
    {
        if (!PageMemory.IsSupported)
        {
            return;
        }
        const int Length = 64 << 10;
        byte* p = (byte*)PageMemory.MapHugePages(Length);
        try
        {
            new Span<byte>(p, Length).Fill(1);
            Assert.DoesNotContain("hg", Smaps.VmFlags((nint)p));
        }
        finally
        {
            PageMemory.Unmap(p, Length);
        }
    }

    [Fact]
    public void HugePageMappingsAreWholePages()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => { _ = PageMemory.MapHugePages((2 << 20) + 100); });
        Assert.Throws<ArgumentOutOfRangeException>(() => { _ = PageMemory.MapHugePages(0); });
    }

    [Theory]
    [InlineData(256 << 10, 2 << 20)]
    [InlineData(256 << 10, 100_000)]
    [InlineData(0, 2 << 20)]
    public void HugePageBlocksFromTheAllocatorComeBackOnFree(int mapThreshold, int length)
    {
        using var allocator = new NativeAllocator(new NativeAllocatorOptions { MapThresholdBytes = mapThreshold, DebugChecks = true });
        Span<long> byUse = stackalloc long[NativeAllocator.UseSlots];
        for (int round = 0; round < 3; round++)
        {
            NativeBuffer b = allocator.Allocate(length, zeroed: round == 1, use: NativeUse.Memtable, hugePages: true);
            bool mapped = mapThreshold > 0 && PageMemory.IsSupported;
            if (mapped && PageMemory.HugePageSize > 0 && b.UsableSize >= PageMemory.HugePageSize)
            {
                Assert.Equal(0, (long)b.Pointer % PageMemory.HugePageSize);
            }
            Assert.Equal(0, (long)b.Pointer % 4096);
            b.UsableSpan.Fill((byte)(round + 1));
            byUse.Clear();
            allocator.GetLiveBytesByUse(byUse);
            Assert.Equal(b.UsableSize, byUse[(int)NativeUse.Memtable]);
            b.Dispose();
            Assert.Equal(new MemoryUsage(0, 0, 0, 0), allocator.GetUsage());
        }
    }

    [Fact]
    public void MemtablesUseHugePagesFromEightHugePagesOfWriteBufferWhenAsked()
    {
        int huge = PageMemory.HugePageSize;
        var large = new ColumnFamilyOptions { WriteBufferSize = 64 << 20 };
        var small = new ColumnFamilyOptions { WriteBufferSize = 4 << 20 };
        var off = new ColumnFamilyOptions { WriteBufferSize = 64 << 20, MemTableHugePages = false };
        Assert.True(new ColumnFamilyOptions().MemTableHugePages);
        Assert.Equal(huge > 0, ColumnFamilyData.UsesHugePages(large));
        Assert.False(ColumnFamilyData.UsesHugePages(small));
        Assert.False(ColumnFamilyData.UsesHugePages(off));
        Assert.Equal(1 << 20, ColumnFamilyData.ArenaBlockSize(64 << 20, hugePages: false));
        Assert.Equal(512 << 10, ColumnFamilyData.ArenaBlockSize(4 << 20, hugePages: false));
        Assert.Equal(4096, ColumnFamilyData.ArenaBlockSize(16 << 10, hugePages: false));
        if (huge > 0)
        {
            Assert.Equal(huge, ColumnFamilyData.ArenaBlockSize(64 << 20, hugePages: true));
        }
    }
}
