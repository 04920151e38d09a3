using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using RocksDbSharp;

namespace KvEngine.Benchmarks.RocksDbBaseline;

/// <summary>
/// KvEngine's write path against release RocksDB (the baseline of each category), same
/// <see cref="ComparisonSettings"/>, WAL on and no sync: Put of a random 16-byte key and a 100-byte
/// value, and Write of a reused batch of 10 such puts (Clear, 10 Puts, Write; reported per batch).
/// Every iteration writes <see cref="PutsPerInvoke"/> keys into a new database of each engine
/// (opened, closed and deleted outside the measurement) whose memtable holds them all, so no flush
/// runs while measuring. RocksDB is driven through RocksDbSharp's span calls
/// (<c>Put(ReadOnlySpan, ReadOnlySpan)</c>, <c>WriteBatch.Put(ReadOnlySpan, ReadOnlySpan)</c>).
/// Public and unsealed for BenchmarkDotNet; single-threaded.
/// </summary>
[MemoryDiagnoser]
[CategoriesColumn]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByCategory)]
[SimpleJob(launchCount: 1, warmupCount: 3, iterationCount: 5)]
public class KvDbVsRocksDbWriteBenchmarks
{
    private const int PutsPerInvoke = 100_000;
    private const int BatchSize = 10;

    private byte[] _keys = [];
    private byte[] _value = [];
    private KvEngine.WriteBatch? _kvBatch;
    private RocksDbSharp.WriteBatch? _rocksBatch;
    private KvBlockCache? _cache;
    private TempDirectory? _dir;
    private KvDb? _kv;
    private RocksDbBaselineDb? _rocks;

    [GlobalSetup]
    public void GlobalSetup()
    {
        _keys = BenchData.RandomKeys(PutsPerInvoke, seed: 11);
        _value = ComparisonSettings.HalfCompressibleValue(BenchData.ValueSize, seed: 12);
        _kvBatch = new KvEngine.WriteBatch();
        _rocksBatch = new RocksDbSharp.WriteBatch();
        _cache = new KvBlockCache(KvBlockCache.DefaultCapacity);
    }

    [GlobalCleanup]
    public void GlobalCleanup()
    {
        CloseDbs();
        _kvBatch?.Dispose();
        _rocksBatch?.Dispose();
        _cache?.Dispose();
    }

    [IterationSetup]
    public void OpenDbs()
    {
        _dir = new TempDirectory();
        _kv = KvDb.Open(_dir.Combine("kv"), ComparisonSettings.KvOptions(_cache!));
        _rocks = new RocksDbBaselineDb(_dir.Combine("rocks"), KvBlockCache.DefaultCapacity);
    }

    [IterationCleanup]
    public void CloseDbs()
    {
        _kv?.Dispose();
        _kv = null;
        _rocks?.Dispose();
        _rocks = null;
        _dir?.Dispose();
        _dir = null;
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = PutsPerInvoke)]
    [BenchmarkCategory("Put")]
    public ulong RocksDbPut() => Puts(null, _rocks!);

    [Benchmark(OperationsPerInvoke = PutsPerInvoke)]
    [BenchmarkCategory("Put")]
    public ulong KvEnginePut() => Puts(_kv!, null);

    [Benchmark(Baseline = true, OperationsPerInvoke = PutsPerInvoke / BatchSize)]
    [BenchmarkCategory("WriteBatch10")]
    public ulong RocksDbWriteBatch10() => WriteBatches(null, _rocks!);

    [Benchmark(OperationsPerInvoke = PutsPerInvoke / BatchSize)]
    [BenchmarkCategory("WriteBatch10")]
    public ulong KvEngineWriteBatch10() => WriteBatches(_kv!, null);

    /// <summary>Every key once, one Put each, on whichever engine is given; returns its last sequence number.</summary>
    private ulong Puts(KvDb? kv, RocksDbBaselineDb? rocks)
    {
        ReadOnlySpan<byte> value = _value;
        for (int i = 0; i < PutsPerInvoke; i++)
        {
            ReadOnlySpan<byte> key = BenchData.Key(_keys, i);
            if (kv != null)
            {
                kv.Put(key, value);
            }
            else
            {
                rocks!.Put(key, value);
            }
        }
        return kv?.LatestSequenceNumber ?? rocks!.Db.GetLatestSequenceNumber();
    }

    /// <summary>Every key once, in reused batches of <see cref="BatchSize"/> (Clear, Puts, Write), on whichever engine is given.</summary>
    private ulong WriteBatches(KvDb? kv, RocksDbBaselineDb? rocks)
    {
        KvEngine.WriteBatch kvBatch = _kvBatch!;
        RocksDbSharp.WriteBatch rocksBatch = _rocksBatch!;
        ReadOnlySpan<byte> value = _value;
        for (int i = 0; i < PutsPerInvoke; i += BatchSize)
        {
            if (kv != null)
            {
                kvBatch.Clear();
                for (int j = 0; j < BatchSize; j++)
                {
                    kvBatch.Put(BenchData.Key(_keys, i + j), value);
                }
                kv.Write(kvBatch);
            }
            else
            {
                rocksBatch.Clear();
                for (int j = 0; j < BatchSize; j++)
                {
                    rocksBatch.Put(BenchData.Key(_keys, i + j), value);
                }
                rocks!.Db.Write(rocksBatch, rocks.WriteOptions);
            }
        }
        return kv?.LatestSequenceNumber ?? rocks!.Db.GetLatestSequenceNumber();
    }
}
