using KvEngine.Cache;
using KvEngine.Compression;
using KvEngine.Memory;
using KvEngine.Table;
using KvEngine.Tests.Table;
using KvEngine.Tests.Util;
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
        AllocationAssert.Zero(
            () =>
            {
                for (ulong i = 0; i < 64; i++)
                {
                    LruHandle? h = cache.Lookup(new CacheKey(3, i));
                    cache.Release(h!.Value);
                }
            },
            "cache lookup hits");
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
        AllocationAssert.Zero(
            () =>
            {
                foreach (Entry e in entries)
                {
                    value.Clear();
                    if (!reader.TryGet(Format.InternalKeys.UserKey(e.Key), Format.InternalKeys.MaxSequenceNumber, value, out _, true))
                    {
                        throw new InvalidOperationException("a key of the table was not found");
                    }
                }
            },
            "table Gets on cached blocks",
            warmups: 0);
        Assert.Equal(reads, stats.GetTickerCount(Ticker.BlockReads)); // no pread on a hit
        Assert.True(stats.GetTickerCount(Ticker.BlockCacheHit) >= entries.Count);
    }
}
