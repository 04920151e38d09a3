using KvEngine.Cache;
using KvEngine.Filters;
using KvEngine.Table;
using KvEngine.Tests.Util;
using static KvEngine.Tests.Table.TableTestUtil;

namespace KvEngine.Tests.Table;

/// <summary>
/// A filter-block cache miss (cache_index_and_filter_blocks) loads the filter into native memory
/// and wraps it in a <see cref="FilterCacheValue"/> and a <see cref="FastLocalBloomNativeReader"/>:
/// both objects are recycled when the value is freed, so misses allocate no managed memory in
/// steady state, whether the loaded filter is inserted and later evicted or used once and freed.
/// </summary>
public class FilterMissAllocationTests
{
    private static byte[] BuildTable(int keys, int seed, TableOptions options) => Build(options, MakeEntries(keys, seed));

    [Fact]
    public void FilterMissesThatInsertAndEvictAllocateNothing()
    {
        var write = new TableOptions { FilterPolicy = new FastLocalBloomPolicy(10) };
        byte[] a = BuildTable(20_000, 1, write);
        byte[] b = BuildTable(20_000, 2, write);
        // Room for one filter (~25 KB each) and the index blocks, not two filters: each table's
        // query misses its filter, inserts it and pushes the other table's filter out (freed).
        var stats = new KvStatistics();
        using var cache = new LruCache(new LruCacheOptions { Capacity = 48 << 10, NumShardBits = 0, HighPriPoolRatio = 0 });
        var read = write with { BlockCache = cache, CacheIndexAndFilterBlocks = true, Statistics = stats };
        using TableReader ra = Open(a, read, "a.sst");
        using TableReader rb = Open(b, read, "b.sst");
        byte[] key = "key0000700"u8.ToArray();
        long misses = 0;
        Action round = () =>
        {
            for (int i = 0; i < 200; i++)
            {
                misses += ra.KeyMayMatch(key) ? 1 : 0;
                misses += rb.KeyMayMatch(key) ? 1 : 0;
            }
        };
        long missesBefore = stats.GetTickerCount(Ticker.BlockCacheFilterMiss);
        AllocationAssert.Zero(round, "filter misses that insert and evict");
        Assert.True(misses > 0, "the key is in both tables");
        // Every query missed (a warm-up and three measured rounds of 400), so the rounds measured the miss path.
        Assert.Equal(missesBefore + 4 * 400, stats.GetTickerCount(Ticker.BlockCacheFilterMiss));
    }

    [Fact]
    public void FilterLoadsThatDoNotFillTheCacheAllocateNothing()
    {
        var write = new TableOptions { FilterPolicy = new FastLocalBloomPolicy(10) };
        byte[] a = BuildTable(20_000, 3, write);
        byte[] b = BuildTable(20_000, 4, write);
        var stats = new KvStatistics();
        using var cache = new LruCache(new LruCacheOptions { Capacity = 48 << 10, NumShardBits = 0, HighPriPoolRatio = 0 });
        var read = write with { BlockCache = cache, CacheIndexAndFilterBlocks = true, Statistics = stats };
        using TableReader ra = Open(a, read, "a.sst");
        using TableReader rb = Open(b, read, "b.sst"); // its filter pushes a's out of the cache
        byte[] present = "key0000700"u8.ToArray();
        byte[] absent = "nokey"u8.ToArray();
        int found = 0;
        Action round = () =>
        {
            for (int i = 0; i < 200; i++)
            {
                found += ra.KeyMayMatch(present, fillCache: false) ? 1 : 0;
                found += ra.KeyMayMatch(absent, fillCache: false) ? 1 : 0;
            }
        };
        long missesBefore = stats.GetTickerCount(Ticker.BlockCacheFilterMiss);
        AllocationAssert.Zero(round, "filter loads for one query (fill_cache=false)");
        Assert.Equal(missesBefore + 4 * 400, stats.GetTickerCount(Ticker.BlockCacheFilterMiss));
        Assert.True(found >= 4 * 200, "the present key always may match");
    }
}
