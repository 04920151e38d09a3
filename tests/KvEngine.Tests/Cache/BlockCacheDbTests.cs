using KvEngine.Storage;

namespace KvEngine.Tests.Cache;

public class BlockCacheDbTests
{
    private const int Keys = 5000;

    private static byte[] Key(int i) => System.Text.Encoding.ASCII.GetBytes($"key{i:D8}");

    private static byte[] Absent(int i) => System.Text.Encoding.ASCII.GetBytes($"key{i:D8}x"); // inside the table's key range

    private static byte[] Value(int i)
    {
        var v = new byte[100];
        new Random(i).NextBytes(v.AsSpan(0, 50));
        return v;
    }

    private static KvDb OpenLoaded(string name, KvOptions options)
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/c");
        options.FileSystem = fs;
        KvDb db = KvDb.Open("/c/" + name, options);
        for (int i = 0; i < Keys; i++)
        {
            db.Put(Key(i), Value(i));
        }
        db.Flush();
        return db;
    }

    [Fact]
    public void GetsHitTheCacheAndReturnTheSameValues()
    {
        var stats = new KvStatistics();
        using var cache = new KvBlockCache(256 << 10, numShardBits: 2);
        using (KvDb db = OpenLoaded("hits", new KvOptions { Statistics = stats, BlockCache = cache }))
        {
            var rnd = new Random(1);
            for (int i = 0; i < 20_000; i++)
            {
                int k = rnd.Next(Keys / 10); // a hot tenth that fits the cache
                Assert.Equal(Value(k), db.Get(Key(k)));
            }
            Assert.Null(db.Get(Key(Keys + 1)));
            long hits = stats.GetTickerCount(Ticker.BlockCacheHit);
            long misses = stats.GetTickerCount(Ticker.BlockCacheMiss);
            Assert.Equal(hits, stats.GetTickerCount(Ticker.BlockCacheDataHit));
            Assert.Equal(misses, stats.GetTickerCount(Ticker.BlockCacheDataMiss));
            Assert.True(hits > 19_000, $"hits {hits}, misses {misses}");
            Assert.Equal(misses, stats.GetTickerCount(Ticker.BlockCacheAdd));
            Assert.Equal(misses, stats.GetTickerCount(Ticker.BlockReads) - stats.GetTickerCount(Ticker.BlockCacheIndexMiss) - stats.GetTickerCount(Ticker.BlockCacheFilterMiss) - MetaReads(stats));
            Assert.True(stats.GetTickerCount(Ticker.BlockCacheBytesInsert) >= stats.GetTickerCount(Ticker.BlockCacheInsertAllocatedBytes));
            Assert.True(stats.GetTickerCount(Ticker.BlockCacheInsertAllocatedBytes) >= stats.GetTickerCount(Ticker.BlockCacheInsertRequestedBytes));

            int n = 0;
            using (KvIterator it = db.NewIterator())
            {
                for (it.SeekToFirst(); it.Valid; it.Next())
                {
                    Assert.Equal(Value(n), it.Value.ToArray());
                    n++;
                }
            }
            Assert.Equal(Keys, n);
            Assert.True(cache.Usage <= cache.Capacity);
            Assert.Equal(0, cache.PinnedUsage);
        }
    }

    // Metadata blocks (metaindex, properties, index, filter) read at table open, outside the cache.
    private static long MetaReads(KvStatistics stats) => stats.GetTickerCount(Ticker.NoFileOpens) * 4;

    [Fact]
    public void FillCacheFalseInsertsNothing()
    {
        var stats = new KvStatistics();
        using var cache = new KvBlockCache(1 << 20);
        using KvDb db = OpenLoaded("nofill", new KvOptions { Statistics = stats, BlockCache = cache });
        var noFill = new ReadOptions { FillCache = false };
        for (int i = 0; i < Keys; i += 7)
        {
            Assert.Equal(Value(i), db.Get(Key(i), noFill));
        }
        using (KvIterator it = db.NewIterator(noFill))
        {
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
            }
        }
        Assert.Equal(0, cache.Usage);
        Assert.Equal(0, stats.GetTickerCount(Ticker.BlockCacheAdd));
        Assert.True(stats.GetTickerCount(Ticker.BlockCacheMiss) > 0);

        Assert.Equal(Value(3), db.Get(Key(3)));
        Assert.True(cache.Usage > 0);
        Assert.Equal(1, stats.GetTickerCount(Ticker.BlockCacheAdd));
        Assert.Equal(Value(3), db.Get(Key(3), noFill)); // cached blocks still serve FillCache=false reads
        Assert.Equal(1, stats.GetTickerCount(Ticker.BlockCacheHit));
    }

    [Fact]
    public void SecondaryCacheServesBlocksEvictedFromATinyPrimary()
    {
        var stats = new KvStatistics();
        using var cache = new KvBlockCache(32 << 10, numShardBits: 0, compressedSecondaryCacheSize: 4 << 20);
        using KvDb db = OpenLoaded("secondary", new KvOptions { Statistics = stats, BlockCache = cache, Compression = KvCompressionType.None });
        for (int pass = 0; pass < 3; pass++)
        {
            for (int i = 0; i < Keys; i += 3)
            {
                Assert.Equal(Value(i), db.Get(Key(i)));
            }
        }
        Assert.True(stats.GetTickerCount(Ticker.SecondaryCacheHits) > 50, stats.ToString());
        Assert.True(stats.GetTickerCount(Ticker.CompressedSecondaryCacheDummyHits) > 0);
        Assert.True(cache.SecondaryUsage > 0);
        Assert.True(cache.Usage <= cache.Capacity);
    }

    [Fact]
    public void DefaultCacheIsPerDatabaseAndCountsHits()
    {
        var stats = new KvStatistics();
        using KvDb db = OpenLoaded("default", new KvOptions { Statistics = stats });
        Assert.Equal(Value(10), db.Get(Key(10)));
        Assert.Equal(Value(11), db.Get(Key(11)));
        Assert.Equal(1, stats.GetTickerCount(Ticker.BlockCacheHit));
        Assert.Equal(1, stats.GetTickerCount(Ticker.BlockCacheMiss));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void IndexAndFilterBlocksGoThroughTheCacheWhenAsked(bool pinL0)
    {
        var stats = new KvStatistics();
        using var cache = new KvBlockCache(1 << 20, numShardBits: 0);
        using (KvDb db = OpenLoaded("meta" + pinL0, new KvOptions
        {
            Statistics = stats, BlockCache = cache, CacheIndexAndFilterBlocks = true, PinL0FilterAndIndexBlocksInCache = pinL0,
        }))
        {
            for (int i = 0; i < Keys; i += 5)
            {
                Assert.Equal(Value(i), db.Get(Key(i)));
                Assert.Null(db.Get(Absent(i)));
            }
            int n = 0;
            using (KvIterator it = db.NewIterator())
            {
                for (it.SeekToFirst(); it.Valid; it.Next())
                {
                    n++;
                }
            }
            Assert.Equal(Keys, n);
            long indexHits = stats.GetTickerCount(Ticker.BlockCacheIndexHit);
            long filterHits = stats.GetTickerCount(Ticker.BlockCacheFilterHit);
            if (pinL0)
            {
                Assert.Equal(0, indexHits + filterHits); // the reader holds them: no lookups
                Assert.True(cache.PinnedUsage > 0);
            }
            else
            {
                Assert.True(indexHits >= Keys / 5, $"index hits {indexHits}");
                Assert.True(filterHits >= Keys / 5, $"filter hits {filterHits}");
                Assert.Equal(0, cache.PinnedUsage);
            }
            Assert.Equal(0, stats.GetTickerCount(Ticker.BlockCacheIndexMiss) + stats.GetTickerCount(Ticker.BlockCacheFilterMiss)); // inserted at open
            Assert.True(stats.GetTickerCount(Ticker.BloomFilterUseful) > Keys / 10);
        }
        Assert.Equal(0, cache.PinnedUsage); // closing released the pins
    }

    [Fact]
    public void EvictedFiltersAndIndexesComeBackThroughTheSecondaryCache()
    {
        var stats = new KvStatistics();
        using var cache = new KvBlockCache(16 << 10, numShardBits: 0, highPriPoolRatio: 0, compressedSecondaryCacheSize: 4 << 20);
        using KvDb db = OpenLoaded("metasec", new KvOptions { Statistics = stats, BlockCache = cache, CacheIndexAndFilterBlocks = true });
        for (int pass = 0; pass < 3; pass++)
        {
            for (int i = 0; i < Keys; i += 11)
            {
                Assert.Equal(Value(i), db.Get(Key(i)));
                Assert.Null(db.Get(Absent(i)));
            }
        }
        Assert.True(stats.GetTickerCount(Ticker.SecondaryCacheHits) > 0);
        Assert.True(stats.GetTickerCount(Ticker.BlockCacheFilterMiss) + stats.GetTickerCount(Ticker.BlockCacheFilterHit) > 0);
        Assert.True(stats.GetTickerCount(Ticker.BloomFilterUseful) > 0);
    }

    [Fact]
    public void StrictCacheTooSmallForABlockCountsAddFailuresAndStillReads()
    {
        var stats = new KvStatistics();
        using var cache = new KvBlockCache(1024, numShardBits: 0, strictCapacity: true);
        using KvDb db = OpenLoaded("strict", new KvOptions { Statistics = stats, BlockCache = cache });
        for (int i = 0; i < Keys; i += 97)
        {
            Assert.Equal(Value(i), db.Get(Key(i)));
        }
        Assert.Equal(0, stats.GetTickerCount(Ticker.BlockCacheAdd));
        Assert.Equal(stats.GetTickerCount(Ticker.BlockCacheMiss), stats.GetTickerCount(Ticker.BlockCacheAddFailures));
        Assert.Equal(0, cache.Usage);
    }
}
