using System.Buffers;
using BenchmarkDotNet.Attributes;

namespace KvEngine.Benchmarks;

/// <summary>
/// MultiGet of 32 keys against 32 TryGets of the same keys (docs/benchmarks.md, "MultiGet"), per
/// key (<c>OperationsPerInvoke</c> counts keys): a database of <see cref="Keys"/> random 16-byte
/// keys with 100-byte values compacted into level 1 (default options: LZ4, 10-bit Bloom filter,
/// XXH3 checksums verified), read through a 64 MiB block cache holding all of it ("Cached") and
/// through a 256 KiB one (about 2% of the data: nearly every lookup reads a block, "Uncached").
/// "Random" batches take consecutive entries of a random key order, so their keys are spread over
/// the table as db_bench's multireadrandom's are (nearly every key in its own data block);
/// "Clustered" batches take every 4th key of a window of 128 neighbouring keys, in a scrambled order
/// (about 8 keys per data block, as in a lookup of related rows). Values go to a reused
/// <see cref="MultiGetResults"/> or buffer. Public and unsealed for BenchmarkDotNet; single-threaded.
/// </summary>
[MemoryDiagnoser]
[SimpleJob(launchCount: 1, warmupCount: 3, iterationCount: 5)]
public class MultiGetBenchmarks
{
    private const int Keys = 100_000;
    private const int BatchSize = 32;
    private const int BatchesPerInvoke = 32;
    internal const int KeysPerInvoke = BatchSize * BatchesPerInvoke;

    private byte[] _keys = [];
    private byte[] _clustered = []; // the batches' keys for the clustered benchmarks, packed in lookup order
    private readonly ReadOnlyMemory<byte>[] _batch = new ReadOnlyMemory<byte>[BatchSize];
    private readonly MultiGetResults _results = new();
    private readonly ArrayBufferWriter<byte> _valueOut = new(256);
    private TempDirectory? _dir;
    private KvBlockCache? _bigCache;
    private KvBlockCache? _smallCache;
    private KvDb? _cachedDb;
    private KvDb? _uncachedDb;
    private int _next;

    [GlobalSetup]
    public void GlobalSetup()
    {
        _keys = BenchData.RandomKeys(Keys, seed: 13);
        byte[][] sorted = BenchData.SortedRandomKeys(Keys, seed: 13);
        _clustered = new byte[Keys * BenchData.KeySize];
        var rng = new Random(17);
        for (int b = 0; b < Keys / BatchSize; b++)
        {
            int window = rng.Next(Keys - (4 * BatchSize));
            for (int j = 0; j < BatchSize; j++)
            {
                sorted[window + (4 * ((j * 13) % BatchSize))].CopyTo(_clustered, ((b * BatchSize) + j) * BenchData.KeySize);
            }
        }
        _dir = new TempDirectory();
        _bigCache = new KvBlockCache(64L << 20);
        _smallCache = new KvBlockCache(256L << 10);
        byte[] value = BenchData.RandomBytes(BenchData.ValueSize, seed: 15);
        _cachedDb = OpenCompacted("cached", _bigCache, value);
        _uncachedDb = OpenCompacted("uncached", _smallCache, value);
        ReadLoops.TryGets(_cachedDb, _keys, 0, Keys, _valueOut); // warm the big cache
    }

    private KvDb OpenCompacted(string name, KvBlockCache cache, byte[] value)
    {
        KvDb db = KvDb.Open(_dir!.Combine(name), new KvOptions { BlockCache = cache, Compression = KvCompressionType.Lz4 });
        for (int i = 0; i < Keys; i++)
        {
            db.Put(BenchData.Key(_keys, i), value);
        }
        db.Flush();
        db.CompactRange(null, null);
        return db;
    }

    [GlobalCleanup]
    public void GlobalCleanup()
    {
        _results.Dispose();
        _cachedDb?.Dispose();
        _uncachedDb?.Dispose();
        _bigCache?.Dispose();
        _smallCache?.Dispose();
        _dir?.Dispose();
    }

    [Benchmark(OperationsPerInvoke = KeysPerInvoke)]
    public int CachedRandom32Gets() => Gets(_cachedDb!, _keys);

    [Benchmark(OperationsPerInvoke = KeysPerInvoke)]
    public int CachedRandomMultiGet32() => MultiGets(_cachedDb!, _keys);

    [Benchmark(OperationsPerInvoke = KeysPerInvoke)]
    public int CachedClustered32Gets() => Gets(_cachedDb!, _clustered);

    [Benchmark(OperationsPerInvoke = KeysPerInvoke)]
    public int CachedClusteredMultiGet32() => MultiGets(_cachedDb!, _clustered);

    [Benchmark(OperationsPerInvoke = KeysPerInvoke)]
    public int UncachedRandom32Gets() => Gets(_uncachedDb!, _keys);

    [Benchmark(OperationsPerInvoke = KeysPerInvoke)]
    public int UncachedRandomMultiGet32() => MultiGets(_uncachedDb!, _keys);

    [Benchmark(OperationsPerInvoke = KeysPerInvoke)]
    public int UncachedClustered32Gets() => Gets(_uncachedDb!, _clustered);

    [Benchmark(OperationsPerInvoke = KeysPerInvoke)]
    public int UncachedClusteredMultiGet32() => MultiGets(_uncachedDb!, _clustered);

    private int Gets(KvDb db, byte[] keys) => ReadLoops.TryGets(db, keys, NextStart(), KeysPerInvoke, _valueOut);

    // The first key of the next KeysPerInvoke, a whole number of batches in.
    private int NextStart() => ReadLoops.NextStart(ref _next, KeysPerInvoke, Keys - (Keys % KeysPerInvoke));

    private int MultiGets(KvDb db, byte[] keys)
    {
        int start = NextStart();
        int found = 0;
        for (int b = 0; b < BatchesPerInvoke; b++)
        {
            for (int j = 0; j < BatchSize; j++)
            {
                _batch[j] = keys.AsMemory((start + (b * BatchSize) + j) * BenchData.KeySize, BenchData.KeySize);
            }
            db.MultiGet(_batch, _results);
            for (int j = 0; j < BatchSize; j++)
            {
                found += _results.TryGetValue(j, out ReadOnlySpan<byte> v) ? v.Length : 0;
            }
        }
        return found;
    }
}
