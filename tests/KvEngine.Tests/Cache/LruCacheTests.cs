using KvEngine.Cache;
using KvEngine.Memory;

namespace KvEngine.Tests.Cache;

public class LruCacheTests
{
    private static readonly NativeAllocator s_alloc = new(new NativeAllocatorOptions { DebugChecks = true });

    private static byte[] Bytes(int n, int seed)
    {
        var b = new byte[n];
        new Random(seed).NextBytes(b);
        return b;
    }

    [Fact]
    public void ChargesUsableSizePlusOverheadAndFreesAtLastRelease()
    {
        // Entries from the checking allocator: a freed entry is poisoned, so a release after the last
        // one finds a negative reference count and throws (a use after free the checks make visible).
        using var cache = new LruCache(new LruCacheOptions { Capacity = 1 << 20, NumShardBits = 0, Allocator = s_alloc });
        var v = new TestValue(s_alloc, Bytes(1000, 1));
        Assert.True(cache.TryInsert(new CacheKey(1, 0), v, CachePriority.Low, out LruHandle? h));
        Assert.Equal(NativeAllocator.UsableSize(1000) + cache.EntryOverheadBytes, cache.Usage);
        Assert.Equal(cache.Usage, cache.PinnedUsage);
        LruHandle again = cache.Lookup(new CacheKey(1, 0))!.Value;
        Assert.Equal(h, again);
        cache.Erase(new CacheKey(1, 0));
        Assert.Null(cache.Lookup(new CacheKey(1, 0)));
        cache.Release(h!.Value);
        Assert.False(v.Freed); // one reference left
        Assert.Equal(Bytes(1000, 1), again.Value.Contents.ToArray());
        cache.Release(again);
        Assert.True(v.Freed);
        Assert.Equal(0, cache.Usage);
        Assert.Throws<InvalidOperationException>(() => cache.Release(again));
    }

    [Fact]
    public void DefaultShardBitsFollowRocksDb()
    {
        Assert.Equal(4, new LruCache(new LruCacheOptions { Capacity = 8L << 20 }).NumShardBits);
        Assert.Equal(0, new LruCache(new LruCacheOptions { Capacity = 512 << 10 }).NumShardBits);
        Assert.Equal(6, new LruCache(new LruCacheOptions { Capacity = 1L << 30 }).NumShardBits);
    }

    [Fact]
    public void UsageNeverExceedsCapacityByMoreThanOneEntryPerShard()
    {
        using var cache = new LruCache(new LruCacheOptions { Capacity = 64 << 10, NumShardBits = 2 });
        var rnd = new Random(5);
        int maxCharge = 0;
        for (int i = 0; i < 2000; i++)
        {
            int n = rnd.Next(1, 3000);
            var v = new TestValue(s_alloc, Bytes(n, i));
            maxCharge = Math.Max(maxCharge, (int)cache.ChargeOf(v));
            if (i % 2 == 0)
            {
                cache.Insert(new CacheKey(7, (ulong)i), v, CachePriority.Low);
            }
            else if (cache.TryInsert(new CacheKey(7, (ulong)i), v, CachePriority.Low, out LruHandle? h))
            {
                cache.Release(h!.Value);
            }
            Assert.True(cache.Usage <= cache.Capacity + (4L * maxCharge), $"usage {cache.Usage} after insert {i}");
            Assert.True(cache.Usage <= cache.ShardCapacity * 4);
        }
        Assert.True(cache.Count > 10);
        cache.EraseUnreferenced();
        Assert.Equal(0, cache.Usage);
        Assert.Equal(0, cache.Count);
    }

    [Fact]
    public void StrictCapacityFailsWhenPinnedEntriesFillTheCache()
    {
        using var cache = new LruCache(new LruCacheOptions { Capacity = 8192, NumShardBits = 0, StrictCapacity = true });
        var handles = new List<LruHandle>();
        int i = 0;
        while (true)
        {
            var v = new TestValue(s_alloc, Bytes(1000, i));
            if (!cache.TryInsert(new CacheKey(1, (ulong)i++), v, CachePriority.Low, out LruHandle? h))
            {
                Assert.False(v.Freed); // the caller keeps it
                v.Free();
                break;
            }
            handles.Add(h!.Value);
        }
        Assert.True(handles.Count >= 6);
        Assert.True(cache.Usage <= cache.Capacity);
        foreach (LruHandle h in handles)
        {
            cache.Release(h);
        }
        var w = new TestValue(s_alloc, Bytes(1000, 99));
        Assert.True(cache.TryInsert(new CacheKey(2, 0), w, CachePriority.Low, out LruHandle? wh)); // room by evicting
        cache.Release(wh!.Value);
    }

    [Fact]
    public void HighPriorityEntriesOutliveALowPriorityScan()
    {
        using var cache = new LruCache(new LruCacheOptions { Capacity = 64 << 10, NumShardBits = 0, HighPriPoolRatio = 0.5 });
        for (int i = 0; i < 8; i++)
        {
            cache.Insert(new CacheKey(1, (ulong)i), new TestValue(s_alloc, Bytes(1000, i), CacheEntryRole.Index), CachePriority.High);
        }
        for (int i = 0; i < 500; i++)
        {
            cache.Insert(new CacheKey(2, (ulong)i), new TestValue(s_alloc, Bytes(1000, i)), CachePriority.Low);
        }
        for (int i = 0; i < 8; i++)
        {
            LruHandle? h = cache.Lookup(new CacheKey(1, (ulong)i));
            Assert.NotNull(h);
            cache.Release(h.Value);
        }
        Assert.Null(cache.Lookup(new CacheKey(2, 0)));
    }

    [Fact]
    public void ConcurrentLookupInsertEraseKeepsChargesConsistent()
    {
        var created = new System.Collections.Concurrent.ConcurrentBag<TestValue>();
        using var cache = new LruCache(new LruCacheOptions { Capacity = 256 << 10, NumShardBits = 3 });
        var threads = new Thread[4];
        for (int t = 0; t < threads.Length; t++)
        {
            int seed = t;
            threads[t] = new Thread(() =>
            {
                var rnd = new Random(seed);
                byte[] payload = Bytes(4096, seed);
                for (int i = 0; i < 20_000; i++)
                {
                    var key = new CacheKey(1, (ulong)rnd.Next(400));
                    int op = rnd.Next(100);
                    if (op < 60)
                    {
                        if (cache.Lookup(key) is LruHandle h)
                        {
                            Assert.Equal((int)key.Offset % 251, h.Value.Contents[0]);
                            cache.Release(h);
                        }
                    }
                    else if (op < 95)
                    {
                        int n = 100 + rnd.Next(3000);
                        payload[0] = (byte)((int)key.Offset % 251);
                        var v = new TestValue(s_alloc, payload.AsSpan(0, n));
                        created.Add(v);
                        if (cache.TryInsert(key, v, CachePriority.Low, out LruHandle? h))
                        {
                            cache.Release(h!.Value);
                        }
                    }
                    else
                    {
                        cache.Erase(key);
                    }
                }
            });
            threads[t].Start();
        }
        foreach (Thread t in threads)
        {
            t.Join();
        }
        Assert.Equal(0, cache.PinnedUsage);
        Assert.True(cache.Usage <= cache.Capacity);
        (long requested, long allocated) = cache.ValueBytes;
        Assert.Equal(cache.Usage, allocated + (cache.Count * cache.EntryOverheadBytes));
        Assert.True(requested <= allocated);
        cache.EraseUnreferenced();
        Assert.Equal(0, cache.Usage);
        Assert.Equal((0L, 0L), cache.ValueBytes);
        Assert.All(created, v => Assert.True(v.Freed));
    }

    [Fact]
    public void ShrinkingTheCapacityEvictsAtOnce()
    {
        using var cache = new LruCache(new LruCacheOptions { Capacity = 64 << 10, NumShardBits = 1 });
        for (int i = 0; i < 40; i++)
        {
            cache.Insert(new CacheKey(1, (ulong)i), new TestValue(s_alloc, Bytes(1000, i)), CachePriority.Low);
        }
        Assert.True(cache.Usage > 32 << 10);
        cache.SetCapacity(16 << 10);
        Assert.True(cache.Usage <= 16 << 10);
        Assert.True(cache.Count > 0);
    }
}
