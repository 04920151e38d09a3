using BenchmarkDotNet.Attributes;

namespace KvEngine.Benchmarks;

/// <summary>
/// The public write path of <see cref="KvDb"/> with the WAL on and no sync (each write group is
/// appended to the WAL and handed to the OS, as RocksDB's default): Put of a random 16-byte key and
/// a 100-byte value, and Write of a reused <see cref="WriteBatch"/> of 10 such puts. Every iteration
/// writes <see cref="PutsPerInvoke"/> keys into a new database (opened, closed and deleted outside
/// the measurement) whose memtable holds them all, so no flush runs while measuring. Public and
/// unsealed for BenchmarkDotNet; single-threaded.
/// </summary>
[MemoryDiagnoser]
[SimpleJob(launchCount: 1, warmupCount: 3, iterationCount: 5)]
public class KvDbWriteBenchmarks
{
    private const int PutsPerInvoke = 100_000;
    private const int BatchSize = 10;

    private byte[] _keys = [];
    private byte[] _value = [];
    private WriteBatch? _batch;
    private TempDirectory? _dir;
    private KvDb? _db;

    [GlobalSetup]
    public void GlobalSetup()
    {
        _keys = BenchData.RandomKeys(PutsPerInvoke, seed: 11);
        _value = BenchData.RandomBytes(BenchData.ValueSize, seed: 12);
        _batch = new WriteBatch();
    }

    [GlobalCleanup]
    public void GlobalCleanup()
    {
        CloseDb();
        _batch?.Dispose();
    }

    [IterationSetup]
    public void OpenDb()
    {
        _dir = new TempDirectory();
        _db = KvDb.Open(_dir.Path);
    }

    [IterationCleanup]
    public void CloseDb()
    {
        _db?.Dispose();
        _db = null;
        _dir?.Dispose();
        _dir = null;
    }

    [Benchmark(OperationsPerInvoke = PutsPerInvoke)]
    public ulong Put()
    {
        KvDb db = _db!;
        ReadOnlySpan<byte> value = _value;
        for (int i = 0; i < PutsPerInvoke; i++)
        {
            db.Put(BenchData.Key(_keys, i), value);
        }
        return db.LatestSequenceNumber;
    }

    /// <summary>Clear, 10 Puts and Write; reported per batch.</summary>
    [Benchmark(OperationsPerInvoke = PutsPerInvoke / BatchSize)]
    public ulong WriteBatch10()
    {
        KvDb db = _db!;
        WriteBatch batch = _batch!;
        ReadOnlySpan<byte> value = _value;
        for (int i = 0; i < PutsPerInvoke; i += BatchSize)
        {
            batch.Clear();
            for (int j = 0; j < BatchSize; j++)
            {
                batch.Put(BenchData.Key(_keys, i + j), value);
            }
            db.Write(batch);
        }
        return db.LatestSequenceNumber;
    }
}
