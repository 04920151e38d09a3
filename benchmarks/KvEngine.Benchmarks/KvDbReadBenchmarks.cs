using System.Buffers;
using BenchmarkDotNet.Attributes;

namespace KvEngine.Benchmarks;

/// <summary>
/// The public read path of <see cref="KvDb"/> (default options: 10-bit Bloom filter, LZ4, XXH3
/// checksums verified): point lookups of keys in the memtable (a database holding
/// <see cref="Keys"/> unflushed keys) and in one flushed level-0 table (a second database, flushed,
/// its memtable empty) — present keys, and absent keys the filter should reject — and iterator Next
/// over the flushed database. TryGet copies the value into a reused buffer; Get returns a new array
/// (its contract), shown for comparison. A third database holds the same flushed table with a
/// partitioned index and decoupled partitioned filters, its metadata in a block cache large enough
/// for all of it (the partitioned Get path: 0 B per operation). Public and unsealed for BenchmarkDotNet; single-threaded.
/// </summary>
[MemoryDiagnoser]
[SimpleJob(launchCount: 1, warmupCount: 3, iterationCount: 5)]
public class KvDbReadBenchmarks
{
    private const int Keys = 100_000;
    private const int OpsPerInvoke = 1_000;

    private byte[] _keys = [];
    private byte[] _absentKeys = [];
    private readonly ArrayBufferWriter<byte> _valueOut = new(256);
    private TempDirectory? _dir;
    private KvDb? _memDb;
    private KvDb? _tableDb;
    private KvDb? _partitionedDb;
    private KvBlockCache? _partitionedCache;
    private KvIterator _iterator; // default until set up (Dispose of default does nothing)
    private int _next;

    [GlobalSetup]
    public void GlobalSetup()
    {
        _keys = BenchData.RandomKeys(Keys, seed: 13);
        _absentKeys = BenchData.RandomKeys(Keys, seed: 14);
        byte[] value = BenchData.RandomBytes(BenchData.ValueSize, seed: 15);
        _dir = new TempDirectory();
        _memDb = KvDb.Open(_dir.Combine("mem"));
        _tableDb = KvDb.Open(_dir.Combine("table"));
        _partitionedDb = KvDb.Open(_dir.Combine("partitioned"), new KvOptions
        {
            IndexType = KvIndexType.TwoLevelIndexSearch,
            PartitionFilters = true,
            CacheIndexAndFilterBlocks = true,
            BlockCache = _partitionedCache = new KvBlockCache(64L << 20),
        });
        for (int i = 0; i < Keys; i++)
        {
            _memDb.Put(BenchData.Key(_keys, i), value);
            _tableDb.Put(BenchData.Key(_keys, i), value);
            _partitionedDb.Put(BenchData.Key(_keys, i), value);
        }
        _tableDb.Flush();
        _partitionedDb.Flush();
        if (_tableDb.GetProperty("rocksdb.num-files-at-level0") != "1")
        {
            throw new InvalidOperationException("The flushed database should hold exactly one level-0 table.");
        }
        _iterator = _tableDb.NewIterator();
        _iterator.SeekToFirst();
    }

    [GlobalCleanup]
    public void GlobalCleanup()
    {
        _iterator.Dispose();
        _memDb?.Dispose();
        _tableDb?.Dispose();
        _partitionedDb?.Dispose();
        _partitionedCache?.Dispose();
        _dir?.Dispose();
    }

    [Benchmark(OperationsPerInvoke = OpsPerInvoke)]
    public int TryGetMemTable() => TryGets(_memDb!, _keys);

    [Benchmark(OperationsPerInvoke = OpsPerInvoke)]
    public int TryGetTable() => TryGets(_tableDb!, _keys);

    [Benchmark(OperationsPerInvoke = OpsPerInvoke)]
    public int TryGetTableMiss() => TryGets(_tableDb!, _absentKeys);

    [Benchmark(OperationsPerInvoke = OpsPerInvoke)]
    public int TryGetPartitioned() => TryGets(_partitionedDb!, _keys);

    [Benchmark(OperationsPerInvoke = OpsPerInvoke)]
    public int TryGetPartitionedMiss() => TryGets(_partitionedDb!, _absentKeys);

    [Benchmark(OperationsPerInvoke = OpsPerInvoke)]
    public int GetMemTable()
    {
        KvDb db = _memDb!;
        int start = NextStart();
        int sum = 0;
        for (int i = 0; i < OpsPerInvoke; i++)
        {
            sum += db.Get(BenchData.Key(_keys, start + i))?.Length ?? 0;
        }
        return sum;
    }

    /// <summary>Next over the flushed database, starting over at the end.</summary>
    [Benchmark(OperationsPerInvoke = OpsPerInvoke)]
    public int IteratorNext()
    {
        return ReadLoops.Nexts(_iterator, OpsPerInvoke);
    }

    private int TryGets(KvDb db, byte[] keys) => ReadLoops.TryGets(db, keys, NextStart(), OpsPerInvoke, _valueOut);

    /// <summary>The first of the next <see cref="OpsPerInvoke"/> keys, wrapping around.</summary>
    private int NextStart() => ReadLoops.NextStart(ref _next, OpsPerInvoke, Keys);
}
