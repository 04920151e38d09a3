using KvEngine.Storage;

namespace KvEngine.Tests.Db;

public class StatisticsTests
{
    [Fact]
    public void CountsWritesReadsFilterResultsAndIteratorMoves()
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/s");
        var stats = new KvStatistics();
        using var db = KvDb.Open("/s/db", new KvOptions { FileSystem = fs, Statistics = stats, BloomBitsPerKey = 10 });
        for (int i = 0; i < 1000; i++)
        {
            db.Put(Key(3 * i), new byte[10]); // absent keys 3i+1, 3i+2 fall inside the table's key range
        }
        Assert.Equal(1000, stats.GetTickerCount(Ticker.NumberKeysWritten));
        Assert.Equal(1000, stats.GetTickerCount("rocksdb.number.keys.written"));
        Assert.Equal(1000, stats.GetTickerCount(Ticker.WriteDoneBySelf) + stats.GetTickerCount(Ticker.WriteDoneByOther));
        Assert.True(stats.GetTickerCount(Ticker.WalFileBytes) > 1000 * 10);
        Assert.Equal(0, stats.GetTickerCount(Ticker.WalFileSynced));

        Assert.NotNull(db.Get(Key(6)));
        Assert.Equal(1, stats.GetTickerCount(Ticker.MemtableHit));

        db.Flush();
        Assert.True(stats.GetTickerCount(Ticker.FlushWriteBytes) > 0);
        for (int i = 0; i < 1000; i++)
        {
            Assert.NotNull(db.Get(Key(3 * i)));
            Assert.Null(db.Get(Key((3 * i) + 1)));
            Assert.Null(db.Get(Key((3 * i) + 2)));
        }
        long useful = stats.GetTickerCount(Ticker.BloomFilterUseful);
        long positive = stats.GetTickerCount(Ticker.BloomFilterFullPositive);
        long truePositive = stats.GetTickerCount(Ticker.BloomFilterFullTruePositive);
        // Every lookup inside the table's key range consults the filter; 2998 and 2999 lie past
        // its largest key (2997), so the range check skips the table before the filter.
        Assert.Equal(2998, useful + positive);
        Assert.Equal(1000, truePositive);
        Assert.InRange(positive - truePositive, 0, 100); // ~1% false positives of 2000 absent keys
        Assert.Equal(1000, stats.GetTickerCount(Ticker.GetHitL0));
        Assert.Equal(3001, stats.GetTickerCount(Ticker.NumberKeysRead));
        Assert.Equal(1, stats.GetTickerCount(Ticker.NoFileOpens));

        using (KvIterator it = db.NewIterator())
        {
            it.Seek(Key(30));
            it.Next();
            it.Prev();
        }
        Assert.Equal(1, stats.GetTickerCount(Ticker.NumberDbSeek));
        Assert.Equal(1, stats.GetTickerCount(Ticker.NumberDbNext));
        Assert.Equal(1, stats.GetTickerCount(Ticker.NumberDbPrev));

        db.Put(Key(1), new byte[1], new WriteOptions { Sync = true });
        Assert.Equal(1, stats.GetTickerCount(Ticker.WalFileSynced));
        Assert.Contains("rocksdb.bloom.filter.useful COUNT : ", stats.ToString(), StringComparison.Ordinal);
        Assert.Throws<ArgumentException>(() => stats.GetTickerCount("rocksdb.no.such.ticker"));
    }

    private static byte[] Key(int i) => System.Text.Encoding.ASCII.GetBytes($"key{i:D6}");
}

public class BlockCachePropertyTests
{
    [Fact]
    public void BlockCachePropertiesReportCapacityAndUsage()
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/p");
        using var cache = new KvBlockCache(4 << 20);
        using var db = KvDb.Open("/p/db", new KvOptions { FileSystem = fs, BlockCache = cache });
        Assert.Equal((4 << 20).ToString(System.Globalization.CultureInfo.InvariantCulture), db.GetProperty("rocksdb.block-cache-capacity"));
        Assert.Equal("0", db.GetProperty("rocksdb.block-cache-usage"));
        for (int i = 0; i < 500; i++)
        {
            db.Put(System.Text.Encoding.ASCII.GetBytes($"k{i:D5}"), new byte[100]);
        }
        db.Flush();
        Assert.NotNull(db.Get("k00042"u8));
        long usage = long.Parse(db.GetProperty("rocksdb.block-cache-usage")!, System.Globalization.CultureInfo.InvariantCulture);
        Assert.True(usage > 0 && usage == cache.Usage, $"usage {usage}, cache {cache.Usage}");
        Assert.Equal("0", db.GetProperty("rocksdb.block-cache-pinned-usage"));
    }
}

public class CompactionCacheTests
{
    [Fact]
    public void CompactionDoesNotFillTheBlockCache()
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/c");
        var stats = new KvStatistics();
        using var cache = new KvBlockCache(4 << 20);
        using var db = KvDb.Open("/c/db", new KvOptions { FileSystem = fs, BlockCache = cache, Statistics = stats, DisableAutoCompactions = true });
        for (int round = 0; round < 3; round++)
        {
            for (int i = 0; i < 300; i++)
            {
                db.Put(System.Text.Encoding.ASCII.GetBytes($"k{(i * 7 + round) % 500:D5}"), new byte[100]);
            }
            db.Flush();
        }
        db.CompactRange(null, null);
        Assert.Equal("0", db.GetProperty("rocksdb.num-files-at-level0"));
        Assert.Equal(0, cache.Usage);
        Assert.Equal(0, stats.GetTickerCount("rocksdb.block.cache.add"));
        Assert.NotNull(db.Get("k00007"u8)); // a user read does fill it
        Assert.True(cache.Usage > 0);
    }
}
