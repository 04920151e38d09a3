using System.Buffers;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using RocksDbSharp;

namespace KvEngine.Benchmarks.RocksDbBaseline;

/// <summary>
/// KvEngine's read path against release RocksDB (the baseline of each category), same data and
/// <see cref="ComparisonSettings"/>, time and managed bytes per operation:
/// <list type="bullet">
/// <item>GetMemTable: present keys of a database holding <see cref="Keys"/> unflushed keys.</item>
/// <item>GetCacheHit: present keys of one flushed level-0 table whose blocks are all in a 64 MiB block cache (warmed in setup).</item>
/// <item>GetCacheMiss: present keys of the same table behind a 256 KiB block cache: about 98% of lookups read,
/// verify, decompress and insert a block (the file itself is in the OS page cache).</item>
/// <item>GetNotFound: absent keys of the cached table (the Bloom filter rejects about 99%).</item>
/// <item>Seek: a reused iterator on the cached table, to random present keys.</item>
/// <item>Next: a reused iterator stepping through the cached table, starting over at the end.</item>
/// </list>
/// Gets copy the value into a reused buffer on both sides (KvEngine's <c>TryGet</c>; RocksDB's
/// <c>rocksdb_get_pinned</c> through <see cref="Shared.RocksDbCalls"/>, since RocksDbSharp's span
/// <c>Get</c> returns a new array: that call is shown too, as RocksDbSharpGetArray). Iterators use
/// RocksDbSharp's span calls (<c>Seek(ReadOnlySpan)</c>, <c>GetKeySpan</c>). Public and unsealed
/// for BenchmarkDotNet; single-threaded.
/// </summary>
[MemoryDiagnoser]
[CategoriesColumn]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByCategory)]
[SimpleJob(launchCount: 1, warmupCount: 3, iterationCount: 5)]
public class KvDbVsRocksDbReadBenchmarks
{
    private const int Keys = 100_000;
    private const int OpsPerInvoke = 1_000;
    private const long HitCacheBytes = 64L << 20;
    private const long MissCacheBytes = 256L << 10;

    private byte[] _keys = [];
    private byte[] _absentKeys = [];
    private readonly ArrayBufferWriter<byte> _valueOut = new(256);
    private readonly List<IDisposable> _owned = [];
    private KvDb? _kvMem;
    private KvDb? _kvHit;
    private KvDb? _kvMiss;
    private KvIterator _kvSeek; // default until set up (Dispose of default does nothing)
    private KvIterator _kvNext; // default until set up (Dispose of default does nothing)
    private RocksDbBaselineDb? _rocksMem;
    private RocksDbBaselineDb? _rocksHit;
    private RocksDbBaselineDb? _rocksMiss;
    private Iterator? _rocksSeek;
    private Iterator? _rocksNext;
    private int _next;

    [GlobalSetup]
    public void GlobalSetup()
    {
        _keys = BenchData.RandomKeys(Keys, seed: 13);
        _absentKeys = BenchData.RandomKeys(Keys, seed: 14);
        byte[] value = ComparisonSettings.HalfCompressibleValue(BenchData.ValueSize, seed: 15);
        var dir = Own(new TempDirectory());
        _kvMem = OpenKv(dir.Combine("kv-mem"), HitCacheBytes);
        _kvHit = OpenKv(dir.Combine("kv-hit"), HitCacheBytes);
        _kvMiss = OpenKv(dir.Combine("kv-miss"), MissCacheBytes);
        _rocksMem = Own(new RocksDbBaselineDb(dir.Combine("rocks-mem"), HitCacheBytes));
        _rocksHit = Own(new RocksDbBaselineDb(dir.Combine("rocks-hit"), HitCacheBytes));
        _rocksMiss = Own(new RocksDbBaselineDb(dir.Combine("rocks-miss"), MissCacheBytes));
        for (int i = 0; i < Keys; i++)
        {
            ReadOnlySpan<byte> key = BenchData.Key(_keys, i);
            _kvMem.Put(key, value);
            _kvHit.Put(key, value);
            _kvMiss.Put(key, value);
            _rocksMem.Put(key, value);
            _rocksHit.Put(key, value);
            _rocksMiss.Put(key, value);
        }
        foreach (KvDb db in new[] { _kvHit, _kvMiss })
        {
            db.Flush();
            if (db.GetProperty("rocksdb.num-files-at-level0") != "1")
            {
                throw new InvalidOperationException("The flushed KvEngine database should hold exactly one level-0 table.");
            }
        }
        _rocksHit.FlushToOneTable();
        _rocksMiss.FlushToOneTable();
        // Every data block of the hit databases into their caches.
        for (int i = 0; i < Keys; i++)
        {
            _valueOut.ResetWrittenCount();
            _kvHit.TryGet(BenchData.Key(_keys, i), _valueOut);
            _valueOut.ResetWrittenCount();
            _rocksHit.TryGet(BenchData.Key(_keys, i), _valueOut);
        }
        _kvSeek = Own(_kvHit.NewIterator());
        _kvNext = Own(_kvHit.NewIterator());
        _kvNext.SeekToFirst();
        _rocksSeek = Own(_rocksHit.NewIterator());
        _rocksNext = Own(_rocksHit.NewIterator());
        _rocksNext.SeekToFirst();
    }

    [GlobalCleanup]
    public void GlobalCleanup()
    {
        // Iterators before their databases, databases before their caches and directory.
        for (int i = _owned.Count - 1; i >= 0; i--)
        {
            _owned[i].Dispose();
        }
        _owned.Clear();
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = OpsPerInvoke)]
    [BenchmarkCategory("GetMemTable")]
    public int RocksDbGetMemTable() => RocksGets(_rocksMem!, _keys);

    [Benchmark(OperationsPerInvoke = OpsPerInvoke)]
    [BenchmarkCategory("GetMemTable")]
    public int KvEngineGetMemTable() => KvGets(_kvMem!, _keys);

    [Benchmark(Baseline = true, OperationsPerInvoke = OpsPerInvoke)]
    [BenchmarkCategory("GetCacheHit")]
    public int RocksDbGetCacheHit() => RocksGets(_rocksHit!, _keys);

    [Benchmark(OperationsPerInvoke = OpsPerInvoke)]
    [BenchmarkCategory("GetCacheHit")]
    public int KvEngineGetCacheHit() => KvGets(_kvHit!, _keys);

    /// <summary>RocksDbSharp's own span Get, which returns a new array per found key.</summary>
    [Benchmark(OperationsPerInvoke = OpsPerInvoke)]
    [BenchmarkCategory("GetCacheHit")]
    public int RocksDbSharpGetArray()
    {
        RocksDb db = _rocksHit!.Db;
        RocksDbSharp.ReadOptions ro = _rocksHit.ReadOptions;
        int start = NextStart();
        int sum = 0;
        for (int i = 0; i < OpsPerInvoke; i++)
        {
            sum += db.Get(BenchData.Key(_keys, start + i), null, ro)?.Length ?? 0;
        }
        return sum;
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = OpsPerInvoke)]
    [BenchmarkCategory("GetCacheMiss")]
    public int RocksDbGetCacheMiss() => RocksGets(_rocksMiss!, _keys);

    [Benchmark(OperationsPerInvoke = OpsPerInvoke)]
    [BenchmarkCategory("GetCacheMiss")]
    public int KvEngineGetCacheMiss() => KvGets(_kvMiss!, _keys);

    [Benchmark(Baseline = true, OperationsPerInvoke = OpsPerInvoke)]
    [BenchmarkCategory("GetNotFound")]
    public int RocksDbGetNotFound() => RocksGets(_rocksHit!, _absentKeys);

    [Benchmark(OperationsPerInvoke = OpsPerInvoke)]
    [BenchmarkCategory("GetNotFound")]
    public int KvEngineGetNotFound() => KvGets(_kvHit!, _absentKeys);

    [Benchmark(Baseline = true, OperationsPerInvoke = OpsPerInvoke)]
    [BenchmarkCategory("Seek")]
    public int RocksDbSeek()
    {
        Iterator it = _rocksSeek!;
        int start = NextStart();
        int sum = 0;
        for (int i = 0; i < OpsPerInvoke; i++)
        {
            it.Seek(BenchData.Key(_keys, start + i));
            sum += it.Valid() ? it.GetKeySpan().Length : 0;
        }
        return sum;
    }

    [Benchmark(OperationsPerInvoke = OpsPerInvoke)]
    [BenchmarkCategory("Seek")]
    public int KvEngineSeek()
    {
        KvIterator it = _kvSeek;
        int start = NextStart();
        int sum = 0;
        for (int i = 0; i < OpsPerInvoke; i++)
        {
            it.Seek(BenchData.Key(_keys, start + i));
            sum += it.Valid ? it.Key.Length : 0;
        }
        return sum;
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = OpsPerInvoke)]
    [BenchmarkCategory("Next")]
    public int RocksDbNext()
    {
        Iterator it = _rocksNext!;
        int sum = 0;
        for (int i = 0; i < OpsPerInvoke; i++)
        {
            if (!it.Valid())
            {
                it.SeekToFirst();
            }
            sum += it.GetKeySpan().Length + it.GetValueSpan().Length;
            it.Next();
        }
        return sum;
    }

    [Benchmark(OperationsPerInvoke = OpsPerInvoke)]
    [BenchmarkCategory("Next")]
    public int KvEngineNext()
    {
        KvIterator it = _kvNext;
        int sum = 0;
        for (int i = 0; i < OpsPerInvoke; i++)
        {
            if (!it.Valid)
            {
                it.SeekToFirst();
            }
            sum += it.Key.Length + it.Value.Length;
            it.Next();
        }
        return sum;
    }

    private KvDb OpenKv(string path, long cacheBytes)
    {
        KvBlockCache cache = Own(new KvBlockCache(cacheBytes));
        return Own(KvDb.Open(path, ComparisonSettings.KvOptions(cache)));
    }

    private T Own<T>(T disposable)
        where T : IDisposable
    {
        _owned.Add(disposable);
        return disposable;
    }

    private int KvGets(KvDb db, byte[] keys) => Gets(db, null, keys);

    private int RocksGets(RocksDbBaselineDb db, byte[] keys) => Gets(null, db, keys);

    /// <summary>TryGet of the next <see cref="OpsPerInvoke"/> keys on whichever engine is given (the branch is the same, perfectly predicted, for both).</summary>
    private int Gets(KvDb? kv, RocksDbBaselineDb? rocks, byte[] keys)
    {
        ArrayBufferWriter<byte> output = _valueOut;
        int start = NextStart();
        int found = 0;
        for (int i = 0; i < OpsPerInvoke; i++)
        {
            output.ResetWrittenCount();
            ReadOnlySpan<byte> key = BenchData.Key(keys, start + i);
            if (kv != null ? kv.TryGet(key, output) : rocks!.TryGet(key, output))
            {
                found += output.WrittenCount;
            }
        }
        return found;
    }

    /// <summary>The first of the next <see cref="OpsPerInvoke"/> keys, wrapping around.</summary>
    private int NextStart()
    {
        int start = _next;
        _next = (start + OpsPerInvoke) % Keys;
        return start;
    }
}
