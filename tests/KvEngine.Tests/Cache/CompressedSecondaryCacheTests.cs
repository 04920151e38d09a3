using KvEngine.Cache;
using KvEngine.Compression;
using KvEngine.Memory;
using KvEngine.Tests.Util;

namespace KvEngine.Tests.Cache;

public class CompressedSecondaryCacheTests
{
    private static readonly NativeAllocator s_alloc = new(new NativeAllocatorOptions { DebugChecks = true });

    /// <summary>Half random, half zeros: compresses to about half, like db_bench's values.</summary>
    private static byte[] BlockLike(int n, int seed)
    {
        var b = new byte[n];
        var rnd = new Random(seed);
        for (int i = 0; i < n; i += 64)
        {
            rnd.NextBytes(b.AsSpan(i, Math.Min(32, n - i)));
        }
        return b;
    }

    private static CompressedSecondaryCache NewCache(CompressionType type = CompressionType.Lz4, bool split = true, long capacity = 1 << 20) =>
        new(new CompressedSecondaryCacheOptions { Capacity = capacity, NumShardBits = 0, Compression = type, Split = split, Allocator = s_alloc });

    [Theory]
    [InlineData(KvCompressionType.Lz4, true)]
    [InlineData(KvCompressionType.Lz4, false)]
    [InlineData(KvCompressionType.Zstd, true)]
    [InlineData(KvCompressionType.None, true)]
    public void BlocksRoundTripByteIdenticalAfterTheSecondDemotion(KvCompressionType type, bool split)
    {
        using CompressedSecondaryCache secondary = NewCache((CompressionType)(byte)type, split);
        var rnd = new Random(3);
        for (int i = 0; i < 60; i++)
        {
            int n = i < 3 ? i : rnd.Next(1, 40000);
            byte[] bytes = i % 3 == 0 ? BlockLike(n, i) : RandomBytes(n, i);
            var key = new CacheKey(9, (ulong)i);
            var v = new TestValue(s_alloc, bytes);
            secondary.Demote(key, v.Contents, v.Role);
            Assert.False(secondary.TryPromote(key, out _, out _, null)); // first eviction: placeholder only
            secondary.Demote(key, v.Contents, v.Role);
            v.Free();
            Assert.True(secondary.TryPromote(key, out NativeBuffer back, out CacheEntryRole role, null));
            Assert.Equal(CacheEntryRole.Data, role);
            Assert.Equal(bytes, back.Span.ToArray());
            back.Dispose();
            Assert.False(secondary.TryPromote(key, out _, out _, null)); // promotion erased it
        }
        secondary.Inner.EraseUnreferenced();
        Assert.Equal(0, secondary.Inner.Usage);
    }

    [Fact]
    public void SplitChunksFillSizeClassesExactly()
    {
        using CompressedSecondaryCache secondary = NewCache(CompressionType.None);
        CompressedSecondaryEntry e = secondary.Compress(RandomBytes(8500, 1), CacheEntryRole.Data);
        Assert.Equal(3, e.ChunkCount);
        Assert.Equal([(8192, 8192), (256, 256), (100, 112)], e.ChunkSizes().ToArray());
        Assert.Equal(8192 + 256 + 112, e.AllocatedBytes);
        e.Free();
        using CompressedSecondaryCache unsplit = NewCache(CompressionType.None, split: false);
        CompressedSecondaryEntry one = unsplit.Compress(RandomBytes(8500, 1), CacheEntryRole.Data);
        Assert.Equal([(8516, 10240)], one.ChunkSizes().ToArray());
        one.Free();
    }

    [Fact]
    public void LongChunkChainsRoundTripAndAreChecked()
    {
        // 16,067 payload bytes: 8192, 4096, 2048, 1024, 512 and 256-byte bins (16 B of each is its
        // header) and a 51-byte tail: seven chunks under one record.
        using CompressedSecondaryCache secondary = NewCache(CompressionType.None);
        byte[] bytes = RandomBytes(16_067, 5);
        for (int round = 0; round < 2; round++) // the second reuses the freed chunks and record
        {
            CompressedSecondaryEntry e = secondary.Compress(bytes, CacheEntryRole.Data);
            Assert.Equal(7, e.ChunkCount);
            Assert.Equal([8192, 4096, 2048, 1024, 512, 256, 51], e.ChunkSizes().Select(c => c.Requested).ToArray());
            var merged = new byte[e.StoredLength];
            Assert.True(e.TryMerge(merged));
            Assert.Equal(bytes, merged);
            e.CorruptPayloadForTesting(5, 7); // a chunk late in the chain
            Assert.False(e.TryMerge(merged));
            e.Free();
        }
        CompressedSecondaryEntry small = secondary.Compress(RandomBytes(3000, 6), CacheEntryRole.Data);
        Assert.Equal(2, small.ChunkCount); // a 2048 bin and the tail
        var back = new byte[small.StoredLength];
        Assert.True(small.TryMerge(back));
        small.Free();
    }

    [Fact]
    public void FiltersAndIncompressibleBlocksStayRaw()
    {
        using CompressedSecondaryCache secondary = NewCache();
        CompressedSecondaryEntry filter = secondary.Compress(new byte[4096], CacheEntryRole.Filter);
        Assert.Equal(CompressionType.None, filter.Compression);
        Assert.Equal(4096, filter.StoredLength);
        filter.Free();
        CompressedSecondaryEntry random = secondary.Compress(RandomBytes(4096, 2), CacheEntryRole.Data);
        Assert.Equal(CompressionType.None, random.Compression);
        random.Free();
        CompressedSecondaryEntry zeros = secondary.Compress(new byte[4096], CacheEntryRole.Data);
        Assert.Equal(CompressionType.Lz4, zeros.Compression);
        Assert.True(zeros.StoredLength < 100);
        zeros.Free();
    }

    [Fact]
    public void CorruptEntryIsDroppedNotReturned()
    {
        using CompressedSecondaryCache secondary = NewCache();
        var key = new CacheKey(1, 42);
        var v = new TestValue(s_alloc, BlockLike(9000, 4));
        secondary.Demote(key, v.Contents, v.Role);
        secondary.Demote(key, v.Contents, v.Role);
        v.Free();
        LruHandle h = secondary.Inner.Lookup(key)!.Value;
        Assert.True(h.IsNativeValue); // a stored entry is a native record, no managed object
        CompressedSecondaryEntry entry = secondary.EntryOf(h);
        entry.CorruptPayloadForTesting(entry.ChunkCount - 1, 3);
        secondary.Inner.Release(h);
        var stats = new KvStatistics();
        Assert.False(secondary.TryPromote(key, out NativeBuffer nothing, out _, stats));
        Assert.False(nothing.IsAllocated);
        Assert.Equal(1, secondary.CorruptEntriesDropped);
        Assert.Null(secondary.Inner.Lookup(key));
        Assert.Equal(0, stats.GetTickerCount(Ticker.SecondaryCacheHits));
    }

    [Fact]
    public void PrimaryEvictionsDemoteAndMissesPromoteByteIdentical()
    {
        using var secondary = NewCache(capacity: 4 << 20);
        using var primary = new LruCache(new LruCacheOptions { Capacity = 64 << 10, NumShardBits = 0 }, secondary);
        var factory = new TestValueFactory();
        var stats = new KvStatistics();
        var blocks = new Dictionary<ulong, byte[]>();
        for (int pass = 0; pass < 2; pass++)
        {
            for (ulong i = 0; i < 100; i++)
            {
                byte[] bytes = BlockLike(4000 + (int)i, (int)i);
                blocks[i] = bytes;
                LruHandle? h = primary.Lookup(new CacheKey(5, i), factory, CachePriority.Low, stats, out _);
                if (h == null)
                {
                    Assert.True(primary.TryInsert(new CacheKey(5, i), new TestValue(s_alloc, bytes), CachePriority.Low, out h));
                }
                primary.Release(h!.Value);
            }
        }
        Assert.True(secondary.Inner.Usage > 0);
        int promoted = 0;
        for (ulong i = 0; i < 100; i++)
        {
            if (primary.Lookup(new CacheKey(5, i), factory, CachePriority.Low, stats, out bool wasPromoted) is LruHandle h)
            {
                Assert.Equal(blocks[i], h.Value.Contents.ToArray());
                promoted += wasPromoted ? 1 : 0;
                primary.Release(h);
            }
        }
        Assert.True(promoted > 50, $"{promoted} promoted");
        Assert.Equal(promoted, factory.Created);
        Assert.Equal(promoted, stats.GetTickerCount(Ticker.SecondaryCacheHits));
        primary.EraseUnreferenced();
        secondary.Inner.EraseUnreferenced();
        Assert.Equal(0, primary.Usage);
        Assert.Equal(0, secondary.Inner.Usage);
    }

    private static byte[] RandomBytes(int n, int seed)
    {
        var b = new byte[n];
        new Random(seed).NextBytes(b);
        return b;
    }
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void DemotionsAndPromotionsAllocateNothingInSteadyState(bool split)
    {
        // Entries (and their chunk tables) are recycled when the secondary cache frees them, on
        // eviction or on promotion: a steady stream of demotions creates no managed objects.
        // A plain allocator: debug checks keep a registry entry per live block.
        var allocator = new NativeAllocator();
        using var secondary = new CompressedSecondaryCache(new CompressedSecondaryCacheOptions
        {
            Capacity = 48 << 10, NumShardBits = 0, Compression = CompressionType.Lz4, Split = split, Allocator = allocator,
        });
        var v = new TestValue(allocator, BlockLike(9000, 7));
        int promoted = 0;
        Action round = () =>
        {
            for (int i = 0; i < 32; i++)
            {
                var key = new CacheKey(5, (ulong)i);
                secondary.Demote(key, v.Contents, v.Role); // placeholder, or nothing when already stored
                secondary.Demote(key, v.Contents, v.Role); // the stored entry; the cache evicts others to make room
            }
            for (int i = 0; i < 32; i += 2)
            {
                if (secondary.TryPromote(new CacheKey(5, (ulong)i), out NativeBuffer back, out _, null))
                {
                    back.Dispose();
                    promoted++;
                }
            }
        };
        AllocationAssert.Zero(round, "demotions to the compressed secondary cache");
        Assert.True(promoted > 0, "some entries were stored and promoted");
        v.Free();
    }
}
