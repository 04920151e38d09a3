using KvEngine.Cache;
using KvEngine.Compression;
using KvEngine.Memory;
using KvEngine.Table;
using KvEngine.Tests.Table;
using KvEngine.Util;

namespace KvEngine.Tests.Cache;

public class CacheHitAllocationTests
{
    [Fact]
    public void LookupHitsAllocateNothing()
    {
        using var cache = new LruCache(new LruCacheOptions { Capacity = 1 << 20, NumShardBits = 2 });
        var alloc = new NativeAllocator();
        for (ulong i = 0; i < 64; i++)
        {
            cache.Insert(new CacheKey(3, i), new TestValue(alloc, new byte[100]), CachePriority.Low);
        }
        for (int warm = 0; warm < 2; warm++)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            for (ulong i = 0; i < 64; i++)
            {
                LruHandle? h = cache.Lookup(new CacheKey(3, i));
                cache.Release(h!);
            }
            long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
            if (warm == 1)
            {
                Assert.Equal(0, allocated);
            }
        }
        cache.EraseUnreferenced();
    }

    [Fact]
    public void TableGetsOnCachedBlocksSkipTheFileAndAllocateNothing()
    {
        using var cache = new LruCache(new LruCacheOptions { Capacity = 4 << 20, NumShardBits = 0 });
        var stats = new KvStatistics();
        var options = new TableOptions { Compression = CompressionType.Lz4, BlockCache = cache, Statistics = stats };
        List<Entry> entries = TableTestUtil.MakeEntries(500, seed: 3);
        byte[] table = TableTestUtil.Build(options, entries);
        using TableReader reader = TableTestUtil.Open(table, options);
        using var value = new ByteBuffer();
        foreach (Entry e in entries)
        {
            value.Clear();
            Assert.True(reader.TryGet(Format.InternalKeys.UserKey(e.Key), Format.InternalKeys.MaxSequenceNumber, value, out _, true));
        }
        long reads = stats.GetTickerCount(Ticker.BlockReads);
        long before = GC.GetAllocatedBytesForCurrentThread();
        foreach (Entry e in entries)
        {
            value.Clear();
            Assert.True(reader.TryGet(Format.InternalKeys.UserKey(e.Key), Format.InternalKeys.MaxSequenceNumber, value, out _, true));
        }
        long perGet = (GC.GetAllocatedBytesForCurrentThread() - before) / entries.Count;
        // Zero when run alone; under a parallel test run ArrayPool.Shared (the cursors' key buffers)
        // may occasionally hand out a fresh array. A Block object per read would be >= 64 bytes.
        Assert.True(perGet < 16, $"{perGet} bytes allocated per cached Get");
        Assert.Equal(reads, stats.GetTickerCount(Ticker.BlockReads)); // no pread on a hit
        Assert.True(stats.GetTickerCount(Ticker.BlockCacheHit) >= entries.Count);
    }
}
