using System.Diagnostics;
using KvEngine.Cache;
using KvEngine.Memory;

namespace KvEngine.DbBench;

/// <summary>
/// kvbench -benchmarks=cachebench: RocksDB 7.8 cache_bench's workload on KvEngine's LRU cache.
/// Keys are drawn from [0, max_key) with max_key = cache_size / resident_ratio / value_bytes,
/// skewed by taking the minimum of skew+1 uniform draws; each op picks lookup-or-insert (a miss
/// inserts), insert, lookup or erase by the percentages; a thread keeps its last handle until its
/// next op; a lookup hit hashes the whole value and an insert fills it with random words (unless
/// -lean), as cache_bench does. Values are native buffers of value_bytes (charged at their usable
/// size plus entry overhead). Prints cache_bench's summary lines.
/// </summary>
internal sealed class CacheBench
{
    private readonly BenchFlags _f;
    private readonly CacheBenchFlags _c;
    private readonly long _capacity;
    private readonly int _threads;
    private readonly ulong _maxKey;
    private readonly NativeAllocator _alloc = NativeAllocator.Shared;
    private LruCache? _cache;
    private long _sink;

    public CacheBench(BenchFlags flags)
    {
        _f = flags;
        _c = flags.Cache;
        _capacity = flags.CacheSizeSet ? flags.CacheSize : 1L << 30;
        _threads = flags.ThreadsSet ? flags.Threads : 16;
        _maxKey = Math.Max(1UL, (ulong)(_capacity / _c.ResidentRatio / _c.ValueBytes));
    }

    public int Run()
    {
        using var cache = new LruCache(new LruCacheOptions { Capacity = _capacity, NumShardBits = _c.NumShardBits, HighPriPoolRatio = 0.5 });
        _cache = cache;
        Console.WriteLine($"Number of threads   : {_threads}");
        Console.WriteLine($"Ops per thread      : {_c.OpsPerThread}");
        Console.WriteLine($"Cache size          : {_capacity / 1048576.0:F2} MB");
        Console.WriteLine($"Num shard bits      : {_c.NumShardBits}");
        Console.WriteLine($"Max key             : {_maxKey}");
        Console.WriteLine($"Resident ratio      : {_c.ResidentRatio}");
        Console.WriteLine($"Skew degree         : {_c.Skew}");
        Console.WriteLine($"Populate cache      : {(_c.PopulateCache ? 1 : 0)}");
        Console.WriteLine($"Lookup+Insert pct   : {_c.LookupInsertPercent}%");
        Console.WriteLine($"Insert percentage   : {_c.InsertPercent}%");
        Console.WriteLine($"Lookup percentage   : {_c.LookupPercent}%");
        Console.WriteLine($"Erase percentage    : {_c.ErasePercent}%");
        if (_c.PopulateCache)
        {
            var rnd = new SplitMix64((ulong)_f.Seed);
            for (long i = 0; i < 2 * _capacity; i += _c.ValueBytes)
            {
                cache.Insert(new CacheKey(0, NextKey(ref rnd)), NewValue(ref rnd), CachePriority.Low);
            }
            Console.WriteLine("Population complete");
        }
        var threads = new Thread[_threads];
        var opsPerSec = new double[_threads];
        using var start = new ManualResetEventSlim();
        for (int t = 0; t < _threads; t++)
        {
            int id = t;
            threads[t] = new Thread(() =>
            {
                start.Wait();
                var sw = Stopwatch.StartNew();
                Operate(new SplitMix64((ulong)(_f.Seed + 1 + id)));
                opsPerSec[id] = _c.OpsPerThread / sw.Elapsed.TotalSeconds;
            });
            threads[t].Start();
        }
        var total = Stopwatch.StartNew();
        start.Set();
        foreach (Thread t in threads)
        {
            t.Join();
        }
        double seconds = total.Elapsed.TotalSeconds;
        double threadOps = 0;
        foreach (double o in opsPerSec)
        {
            threadOps += o;
        }
        (long requested, long allocated) = cache.ValueBytes;
        Console.WriteLine($"Complete in {seconds:F3} s; Rough parallel ops/sec = {(long)(_c.OpsPerThread * _threads / seconds)}");
        Console.WriteLine($"Thread ops/sec = {(long)(threadOps / _threads)}");
        Console.WriteLine($"Cache usage = {cache.Usage} of {cache.Capacity}; values requested {requested} B, allocated {allocated} B (checksum {Volatile.Read(ref _sink) & 0xFF})");
        cache.EraseUnreferenced();
        return 0;
    }

    private void Operate(SplitMix64 rnd)
    {
        LruCache cache = _cache!;
        int liThreshold = _c.LookupInsertPercent;
        int insThreshold = liThreshold + _c.InsertPercent;
        int lookupThreshold = insThreshold + _c.LookupPercent;
        int eraseThreshold = lookupThreshold + _c.ErasePercent;
        LruHandle? handle = null;
        long sink = 0;
        for (long i = 0; i < _c.OpsPerThread; i++)
        {
            var key = new CacheKey(0, NextKey(ref rnd));
            int op = (int)rnd.Below(100);
            if (op < liThreshold)
            {
                ReleaseHandle(cache, ref handle);
                handle = cache.Lookup(key);
                if (handle is LruHandle hit)
                {
                    sink += Touch(hit);
                }
                else
                {
                    Insert(cache, key, ref rnd, ref handle);
                }
            }
            else if (op < insThreshold)
            {
                ReleaseHandle(cache, ref handle);
                Insert(cache, key, ref rnd, ref handle);
            }
            else if (op < lookupThreshold)
            {
                ReleaseHandle(cache, ref handle);
                handle = cache.Lookup(key);
                if (handle is LruHandle hit)
                {
                    sink += Touch(hit);
                }
            }
            else if (op < eraseThreshold)
            {
                cache.Erase(key);
            }
        }
        ReleaseHandle(cache, ref handle);
        Interlocked.Add(ref _sink, sink);
    }

    private void Insert(LruCache cache, in CacheKey key, ref SplitMix64 rnd, ref LruHandle? handle)
    {
        BenchValue v = NewValue(ref rnd);
        if (!cache.TryInsert(key, v, CachePriority.Low, out handle))
        {
            v.Free();
        }
    }

    private static void ReleaseHandle(LruCache cache, ref LruHandle? handle)
    {
        if (handle is LruHandle held)
        {
            cache.Release(held);
            handle = null;
        }
    }

    private long Touch(LruHandle h) => _c.Lean ? 0 : (long)System.IO.Hashing.XxHash3.HashToUInt64(h.Value.Contents);

    private ulong NextKey(ref SplitMix64 rnd)
    {
        ulong raw = rnd.Next();
        for (int i = 0; i < _c.Skew; i++)
        {
            raw = Math.Min(raw, rnd.Next());
        }
        return (ulong)(((UInt128)raw * _maxKey) >> 64);
    }

    private BenchValue NewValue(ref SplitMix64 rnd)
    {
        NativeBuffer b = _alloc.Allocate(_c.ValueBytes);
        if (!_c.Lean)
        {
            Span<byte> s = b.Span;
            for (int i = 0; i + 8 <= s.Length; i += 8)
            {
                System.Buffers.Binary.BinaryPrimitives.WriteUInt64LittleEndian(s[i..], rnd.Next());
            }
        }
        return new BenchValue(b);
    }
}
