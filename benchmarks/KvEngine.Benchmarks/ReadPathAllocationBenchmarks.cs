using System.Buffers;
using BenchmarkDotNet.Attributes;

namespace KvEngine.Benchmarks;

/// <summary>
/// Managed allocation per operation on every hot path of <see cref="KvDb"/> (the table in
/// docs/benchmarks.md, "Hot paths (BenchmarkDotNet)"): TryGet of keys in the memtable, in cached
/// blocks, in blocks that must be read from disk (a 256 KiB block cache under about 12 MiB of
/// table data, so nearly every Get misses and evicts), of absent keys; Seek and Next on a reused
/// iterator; NewIterator (+ Seek + Dispose); Refresh; and a one-entry WriteBatch written with the
/// WAL on. The table databases hold <see cref="Keys"/> keys compacted into level 1 with default
/// options otherwise (LZ4, 10-bit Bloom filter, XXH3 checksums verified). Public and unsealed for
/// BenchmarkDotNet; single-threaded.
/// </summary>
[MemoryDiagnoser]
[SimpleJob(launchCount: 1, warmupCount: 3, iterationCount: 5)]
public class ReadPathAllocationBenchmarks
{
    private const int Keys = 100_000;
    private const int OpsPerInvoke = 1_000;

    private byte[] _keys = [];
    private byte[] _absentKeys = [];
    private byte[] _value = [];
    private readonly ArrayBufferWriter<byte> _valueOut = new(256);
    private TempDirectory? _dir;
    private KvBlockCache? _bigCache;
    private KvBlockCache? _smallCache;
    private KvDb? _memDb;
    private KvDb? _hitDb;
    private KvDb? _missDb;
    private KvDb? _writeDb;
    private KvIterator _seekIterator; // default until set up (Dispose of default does nothing)
    private KvIterator _nextIterator; // default until set up (Dispose of default does nothing)
    private WriteBatch? _batch;
    private int _next;

    [GlobalSetup]
    public void GlobalSetup()
    {
        _keys = BenchData.RandomKeys(Keys, seed: 13);
        _absentKeys = BenchData.RandomKeys(Keys, seed: 14);
        _value = BenchData.RandomBytes(BenchData.ValueSize, seed: 15);
        _dir = new TempDirectory();
        _bigCache = new KvBlockCache(64L << 20);
        _smallCache = new KvBlockCache(256L << 10);
        _memDb = KvDb.Open(_dir.Combine("mem"));
        _hitDb = OpenCompacted("hit", _bigCache);
        _missDb = OpenCompacted("miss", _smallCache);
        _writeDb = KvDb.Open(_dir.Combine("write"));
        for (int i = 0; i < Keys; i++)
        {
            _memDb.Put(BenchData.Key(_keys, i), _value);
        }
        _seekIterator = _hitDb.NewIterator();
        _nextIterator = _hitDb.NewIterator();
        _nextIterator.SeekToFirst();
        _batch = new WriteBatch();
        TryGets(_hitDb, _keys, Keys); // warm the big cache
    }

    private KvDb OpenCompacted(string name, KvBlockCache cache)
    {
        KvDb db = KvDb.Open(_dir!.Combine(name), new KvOptions { BlockCache = cache, Compression = KvCompressionType.Lz4 });
        for (int i = 0; i < Keys; i++)
        {
            db.Put(BenchData.Key(_keys, i), _value);
        }
        db.Flush();
        db.CompactRange(null, null);
        return db;
    }

    [GlobalCleanup]
    public void GlobalCleanup()
    {
        _seekIterator.Dispose();
        _nextIterator.Dispose();
        _batch?.Dispose();
        _memDb?.Dispose();
        _hitDb?.Dispose();
        _missDb?.Dispose();
        _writeDb?.Dispose();
        _bigCache?.Dispose();
        _smallCache?.Dispose();
        _dir?.Dispose();
    }

    [Benchmark(OperationsPerInvoke = OpsPerInvoke)]
    public int GetMemTable() => TryGets(_memDb!, _keys, OpsPerInvoke);

    [Benchmark(OperationsPerInvoke = OpsPerInvoke)]
    public int GetCacheHit() => TryGets(_hitDb!, _keys, OpsPerInvoke);

    [Benchmark(OperationsPerInvoke = OpsPerInvoke)]
    public int GetCacheMiss() => TryGets(_missDb!, _keys, OpsPerInvoke);

    [Benchmark(OperationsPerInvoke = OpsPerInvoke)]
    public int GetNotFound() => TryGets(_hitDb!, _absentKeys, OpsPerInvoke);

    [Benchmark(OperationsPerInvoke = OpsPerInvoke)]
    public int SeekReused()
    {
        KvIterator it = _seekIterator;
        int start = NextStart();
        int sum = 0;
        for (int i = 0; i < OpsPerInvoke; i++)
        {
            it.Seek(BenchData.Key(_keys, start + i));
            sum += it.Valid ? it.Value.Length : 0;
        }
        return sum;
    }

    /// <summary>Next over the compacted database, starting over at the end.</summary>
    [Benchmark(OperationsPerInvoke = OpsPerInvoke)]
    public int Next()
    {
        return ReadLoops.Nexts(_nextIterator, OpsPerInvoke);
    }

    /// <summary>NewIterator, one Seek, Dispose: the public iterator object is the one allocation left.</summary>
    [Benchmark(OperationsPerInvoke = OpsPerInvoke)]
    public int NewIteratorSeek()
    {
        KvDb db = _hitDb!;
        int start = NextStart();
        int sum = 0;
        for (int i = 0; i < OpsPerInvoke; i++)
        {
            using KvIterator it = db.NewIterator();
            it.Seek(BenchData.Key(_keys, start + i));
            sum += it.Valid ? 1 : 0;
        }
        return sum;
    }

    /// <summary>Refresh then Seek on a reused iterator.</summary>
    [Benchmark(OperationsPerInvoke = OpsPerInvoke)]
    public int RefreshSeek()
    {
        KvIterator it = _seekIterator;
        int start = NextStart();
        int sum = 0;
        for (int i = 0; i < OpsPerInvoke; i++)
        {
            it.Refresh();
            it.Seek(BenchData.Key(_keys, start + i));
            sum += it.Valid ? 1 : 0;
        }
        return sum;
    }

    /// <summary>A reused one-entry WriteBatch, WAL on, no sync.</summary>
    [Benchmark(OperationsPerInvoke = OpsPerInvoke)]
    public void Write()
    {
        KvDb db = _writeDb!;
        WriteBatch batch = _batch!;
        int start = NextStart();
        for (int i = 0; i < OpsPerInvoke; i++)
        {
            batch.Clear();
            batch.Put(BenchData.Key(_keys, start + i), _value);
            db.Write(batch);
        }
    }

    private int TryGets(KvDb db, byte[] keys, int count) =>
        ReadLoops.TryGets(db, keys, count == OpsPerInvoke ? NextStart() : 0, count, _valueOut);

    /// <summary>The first of the next <see cref="OpsPerInvoke"/> keys, wrapping around.</summary>
    private int NextStart() => ReadLoops.NextStart(ref _next, OpsPerInvoke, Keys);
}
