using System.Numerics;
using KvEngine.Memory;

namespace KvEngine.Tests.Memory;

public unsafe class NativeAllocatorTests
{
    private static NativeAllocator NewAllocator(bool debug = true, int shards = 0) =>
        new(new NativeAllocatorOptions { DebugChecks = debug, Shards = shards });

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void EveryAllocationHasItsClassAsUsableSizeAndNaturalAlignment(bool debug)
    {
        using NativeAllocator allocator = NewAllocator(debug);
        var buffers = new List<NativeBuffer>();
        for (int size = 0; size <= 20_000; size += size < 300 ? 1 : 97)
        {
            NativeBuffer b = allocator.Allocate(size);
            buffers.Add(b);
            Assert.Equal(size, b.Length);
            Assert.Equal(SizeClasses.UsableSize(size), b.UsableSize);
            Assert.Equal(b.UsableSize, NativeAllocator.UsableSize(size));
            long address = (long)b.Pointer;
            Assert.Equal(0, address % SizeClasses.Quantum);
            // Objects sit at multiples of their class in page-aligned slabs (large ones are page-aligned).
            long natural = Math.Min(1L << BitOperations.TrailingZeroCount(b.UsableSize), 4096);
            Assert.Equal(0, address % natural);
            b.UsableSpan.Fill((byte)size);
        }
        foreach (NativeBuffer b in buffers)
        {
            Assert.True(b.UsableSpan.IndexOfAnyExcept((byte)b.Length) < 0, $"block of {b.Length} was overwritten");
        }
        MemoryUsage usage = allocator.GetUsage();
        Assert.Equal(buffers.Sum(b => (long)b.Length), usage.RequestedBytes);
        Assert.Equal(buffers.Sum(b => (long)b.UsableSize), usage.AllocatedBytes);
        Assert.Equal(buffers.Count, usage.LiveAllocations);
        Assert.True(usage.ResidentBytes >= usage.AllocatedBytes);
        foreach (NativeBuffer b in buffers)
        {
            b.Dispose();
        }
        usage = allocator.GetUsage();
        Assert.Equal(new MemoryUsage(0, 0, usage.ResidentBytes, 0), usage);
    }

    [Fact]
    public void SlabsCutFromSeveralRegionsNeverOverlap()
    {
        // 1 KiB blocks fill 64 KiB slabs; 12,000 of them take ~188 slabs, over ~3 slab regions, and
        // a second class interleaves its slabs with the first's in the same regions.
        using NativeAllocator allocator = NewAllocator(debug: false, shards: 1);
        var buffers = new List<NativeBuffer>();
        for (int i = 0; i < 12_000; i++)
        {
            buffers.Add(allocator.Allocate(1024));
            if (i % 4 == 0)
            {
                buffers.Add(allocator.Allocate(3000));
            }
        }
        for (int i = 0; i < buffers.Count; i++)
        {
            buffers[i].UsableSpan.Fill((byte)i);
            Assert.Equal(0, (long)buffers[i].Pointer % 16);
        }
        for (int i = 0; i < buffers.Count; i++)
        {
            Assert.True(buffers[i].UsableSpan.IndexOfAnyExcept((byte)i) < 0, $"block {i} was overwritten");
        }
        int slabs1K = (12_000 + 63) / 64;
        int per3K = SizeClasses.SlabBytes(SizeClasses.IndexOf(3000), 64 << 10, 4096) / SizeClasses.UsableSize(3000);
        int slabs3K = (3000 + per3K - 1) / per3K;
        long expected = ((long)slabs1K * SizeClasses.SlabBytes(SizeClasses.IndexOf(1024), 64 << 10, 4096))
            + ((long)slabs3K * SizeClasses.SlabBytes(SizeClasses.IndexOf(3000), 64 << 10, 4096));
        Assert.True(expected > 2L * NativeAllocator.SlabRegionBytes);
        Assert.Equal(expected, allocator.GetUsage().ResidentBytes);
        foreach (NativeBuffer b in buffers)
        {
            b.Dispose();
        }
    }

    [Fact]
    public void FreedBlocksAreReusedAndZeroedOnRequest()
    {
        using NativeAllocator allocator = NewAllocator(debug: false, shards: 1);
        NativeBuffer a = allocator.Allocate(100);
        a.Span.Fill(0xAB);
        byte* first = a.Pointer;
        a.Dispose();
        long resident = allocator.GetUsage().ResidentBytes;
        NativeBuffer b = allocator.Allocate(110, zeroed: true);
        Assert.Equal((nint)first, (nint)b.Pointer);
        Assert.True(b.UsableSpan.IndexOfAnyExcept((byte)0) < 0);
        Assert.Equal(resident, allocator.GetUsage().ResidentBytes);
        b.Dispose();
    }

    [Fact]
    public void LargeAllocationsAreReturnedToTheSystem()
    {
        using NativeAllocator allocator = NewAllocator();
        NativeBuffer b = allocator.Allocate(1_000_000);
        Assert.Equal(1_048_576, b.UsableSize);
        Assert.Equal(0, (long)b.Pointer % 4096);
        Assert.Equal(new MemoryUsage(1_000_000, 1_048_576, 1_048_576, 1), allocator.GetUsage());
        b.Dispose();
        Assert.Equal(new MemoryUsage(0, 0, 0, 0), allocator.GetUsage());
    }

    /// <summary>
    /// Blocks from the map threshold up are kernel mappings on Linux (glibc kept freed ones
    /// resident); below it, and with the threshold at 0, malloc serves them. Either way the
    /// whole block is writable, page-aligned and accounted, and comes back on free.
    /// </summary>
    [Theory]
    [InlineData(0, 300_000)]
    [InlineData(256 << 10, 300_000)]
    [InlineData(256 << 10, 100_000)]
    [InlineData(256 << 10, 9_000_000)]
    [InlineData(SizeClasses.LargestSlabClass + 1, 20_000)]
    public void LargeBlocksAreMappedFromTheThresholdUp(int threshold, int length)
    {
        if (threshold > 0 && OperatingSystem.IsLinux())
        {
            Assert.True(PageMemory.IsSupported, "mmap from libc.so.6 should be available on Linux");
        }
        using var allocator = new NativeAllocator(new NativeAllocatorOptions { MapThresholdBytes = threshold });
        for (int round = 0; round < 3; round++)
        {
            NativeBuffer b = allocator.Allocate(length, zeroed: round == 1);
            Assert.Equal(0, (long)b.Pointer % 4096);
            Assert.True(b.UsableSize >= length);
            if (round == 1)
            {
                Assert.True(b.UsableSpan.IndexOfAnyExcept((byte)0) < 0);
            }
            b.UsableSpan.Fill((byte)(round + 1));
            Assert.Equal((byte)(round + 1), b.UsableSpan[^1]);
            Assert.Equal(1, allocator.GetUsage().LiveAllocations);
            b.Dispose();
            Assert.Equal(new MemoryUsage(0, 0, 0, 0), allocator.GetUsage());
        }
    }

    /// <summary>
    /// By default every block above the slab classes is a mapping of its own: glibc kept freed
    /// 16-256 KiB blocks resident in per-thread heaps. A new mapping is zero already, so a zeroed
    /// request leaves it untouched (no page resident), where a block from malloc is cleared.
    /// </summary>
    [Theory]
    [InlineData(SizeClasses.LargestSlabClass + 1)]
    [InlineData(100_000)]
    [InlineData(255_000)]
    public void ByDefaultEveryBlockAboveTheSlabClassesIsAMappingOfItsOwn(int length)
    {
        Assert.True(SizeClasses.IndexOf(length) >= SizeClasses.SlabClassCount);
        if (!PageMemory.IsSupported)
        {
            return; // malloc serves every large block where mappings are unsupported
        }
        using var allocator = new NativeAllocator(new NativeAllocatorOptions { DebugChecks = false });
        NativeBuffer b = allocator.Allocate(length, zeroed: true);
        Assert.Equal(0, Smaps.ResidentPages((nint)b.Pointer, b.UsableSize));
        Assert.True(b.UsableSpan.IndexOfAnyExcept((byte)0) < 0);
        b.UsableSpan.Fill(7);
        Assert.Equal(b.UsableSize / Environment.SystemPageSize, Smaps.ResidentPages((nint)b.Pointer, b.UsableSize));
        b.Dispose();
        Assert.Equal(new MemoryUsage(0, 0, 0, 0), allocator.GetUsage());
    }

    [Fact]
    public void ManyThreadsKeepConsistentAccounting()
    {
        using NativeAllocator allocator = NewAllocator(debug: true, shards: 4);
        const int Threads = 4;
        const int Operations = 40_000;
        var failures = new List<string>();
        var threads = new Thread[Threads];
        var handOff = new System.Collections.Concurrent.ConcurrentQueue<NativeBuffer>();
        for (int t = 0; t < Threads; t++)
        {
            int seed = t;
            threads[t] = new Thread(() =>
            {
                var rng = new Random(seed);
                var mine = new List<NativeBuffer>();
                try
                {
                    for (int i = 0; i < Operations; i++)
                    {
                        int op = rng.Next(10);
                        if (op < 5 || mine.Count == 0)
                        {
                            int size = rng.Next(100) switch
                            {
                                < 70 => rng.Next(0, 300),
                                < 97 => rng.Next(300, 14_337),
                                _ => rng.Next(14_337, 200_000),
                            };
                            NativeBuffer b = allocator.Allocate(size);
                            b.Span.Fill((byte)(size * 31));
                            mine.Add(b);
                        }
                        else
                        {
                            int at = rng.Next(mine.Count);
                            NativeBuffer b = mine[at];
                            mine[at] = mine[^1];
                            mine.RemoveAt(mine.Count - 1);
                            if (b.Span.IndexOfAnyExcept((byte)(b.Length * 31)) >= 0)
                            {
                                throw new InvalidOperationException($"block of {b.Length} bytes was overwritten");
                            }
                            if (op == 9)
                            {
                                handOff.Enqueue(b); // freed by another thread below
                            }
                            else
                            {
                                b.Dispose();
                            }
                        }
                        if (handOff.TryDequeue(out NativeBuffer other))
                        {
                            other.Dispose();
                        }
                    }
                    foreach (NativeBuffer b in mine)
                    {
                        b.Dispose();
                    }
                }
                catch (Exception e)
                {
                    lock (failures)
                    {
                        failures.Add(e.ToString());
                    }
                }
            });
            threads[t].Start();
        }
        foreach (Thread t in threads)
        {
            t.Join();
        }
        while (handOff.TryDequeue(out NativeBuffer rest))
        {
            rest.Dispose();
        }
        Assert.Empty(failures);
        MemoryUsage usage = allocator.GetUsage();
        Assert.Equal(0, usage.RequestedBytes);
        Assert.Equal(0, usage.AllocatedBytes);
        Assert.Equal(0, usage.LiveAllocations);
        Assert.True(usage.ResidentBytes > 0);
    }

    [Fact]
    public void DebugChecksCatchDoubleFree()
    {
        using NativeAllocator allocator = NewAllocator(debug: true);
        NativeBuffer small = allocator.Allocate(40);
        NativeBuffer copy = small;
        small.Dispose();
        Assert.Throws<ObjectDisposedException>(() => copy.Dispose());
        NativeBuffer large = allocator.Allocate(100_000);
        large.Dispose();
        Assert.Throws<ObjectDisposedException>(() => large.Dispose());
        Assert.Equal(0, allocator.GetUsage().LiveAllocations);
    }

    [Fact]
    public void DebugChecksCatchStaleHandleAfterTheBlockIsReused()
    {
        using NativeAllocator allocator = NewAllocator(debug: true, shards: 1);
        NativeBuffer a = allocator.Allocate(64);
        NativeBuffer stale = a;
        a.Dispose();
        NativeBuffer b = allocator.Allocate(64);
        Assert.Equal((nint)stale.RawPointer, (nint)b.RawPointer);
        Assert.Throws<ObjectDisposedException>(() => stale.Span.Length);
        Assert.Throws<ObjectDisposedException>(() => stale.Dispose());
        Assert.Equal(64, b.Span.Length);
        b.Dispose();
    }

    [Fact]
    public void DebugChecksCatchUseAndWriteAfterFree()
    {
        using NativeAllocator allocator = NewAllocator(debug: true, shards: 1);
        NativeBuffer a = allocator.Allocate(200);
        byte* p = a.Pointer;
        a.Dispose();
        Assert.Throws<ObjectDisposedException>(() => a.Span.Length);
        Assert.Throws<ObjectDisposedException>(() => (nint)a.Pointer);
        p[100] = 1; // a write through a pointer kept past free
        Assert.Throws<InvalidOperationException>(() => allocator.Allocate(200));
    }

    [Fact]
    public void BuffersOfAnotherAllocatorAreRejected()
    {
        using NativeAllocator one = NewAllocator();
        using NativeAllocator two = NewAllocator();
        NativeBuffer b = one.Allocate(10);
        Assert.Throws<ArgumentException>(() => two.Free(b));
        b.Dispose();
        default(NativeBuffer).Dispose();
        Assert.Equal(0, default(NativeBuffer).UsableSize);
    }
}
