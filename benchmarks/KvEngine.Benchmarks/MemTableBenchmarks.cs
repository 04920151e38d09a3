using BenchmarkDotNet.Attributes;
using KvEngine.Format;
using KvEngine.Memtable;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Benchmarks;

/// <summary>
/// <see cref="MemTable"/>: insert of random 16-byte keys with 100-byte values, and point lookups
/// that hit and miss in a memtable of <see cref="Entries"/> entries. Insert starts every iteration
/// from an empty memtable (created and freed outside the measurement), so an iteration is one
/// invocation of <see cref="InsertBatch"/> inserts. <see cref="HashIndex"/> gives the memtable a
/// hash index as the database does by default (2 MiB of buckets, 1/32 of 64 MiB), or none
/// (lookups then search the skip list). Public and unsealed because BenchmarkDotNet
/// derives from benchmark classes; one instance per run, single-threaded.
/// </summary>
[MemoryDiagnoser]
[SimpleJob(launchCount: 1, warmupCount: 3, iterationCount: 5)]
public class MemTableBenchmarks
{
    private const int Entries = 200_000;
    private const int InsertBatch = Entries;
    private const int LookupsPerInvoke = 1_000;

    private byte[] _keys = [];
    private byte[] _absentKeys = [];
    private byte[] _value = [];
    private MemTable? _table;
    private int _next;

    [Params(false, true)]
    public bool HashIndex { get; set; }

    private MemTable NewMemTable() =>
        new(new MemTableOptions(HashIndexBuckets: HashIndex ? MemTableHashIndex.BucketsFor(64L << 20, 1.0 / 32) : 0));

    [GlobalSetup]
    public void GlobalSetup()
    {
        _keys = BenchData.RandomKeys(Entries, seed: 1);
        _absentKeys = BenchData.RandomKeys(Entries, seed: 2);
        _value = BenchData.RandomBytes(BenchData.ValueSize, seed: 3);
    }

    [GlobalSetup(Targets = [nameof(TryGetHit), nameof(TryGetMiss)])]
    public void LookupSetup()
    {
        GlobalSetup();
        _table = NewMemTable();
        for (int i = 0; i < Entries; i++)
        {
            _table.Add((ulong)i + 1, ValueType.Value, BenchData.Key(_keys, i), _value);
        }
    }

    [IterationSetup(Target = nameof(Insert))]
    public void NewTable() => _table = NewMemTable();

    [IterationCleanup(Target = nameof(Insert))]
    public void FreeTable() => FreeTableCore();

    [GlobalCleanup]
    public void GlobalCleanup() => FreeTableCore();

    [Benchmark(OperationsPerInvoke = InsertBatch)]
    public bool Insert()
    {
        MemTable table = _table!;
        ReadOnlySpan<byte> value = _value;
        bool all = true;
        for (int i = 0; i < InsertBatch; i++)
        {
            all &= table.Add((ulong)i + 1, ValueType.Value, BenchData.Key(_keys, i), value);
        }
        return all;
    }

    [Benchmark(OperationsPerInvoke = LookupsPerInvoke)]
    public int TryGetHit() => Lookups(_keys);

    [Benchmark(OperationsPerInvoke = LookupsPerInvoke)]
    public int TryGetMiss() => Lookups(_absentKeys);

    /// <summary>The next <see cref="LookupsPerInvoke"/> keys of <paramref name="keys"/>, wrapping around.</summary>
    private int Lookups(byte[] keys)
    {
        MemTable table = _table!;
        int start = _next;
        _next = (start + LookupsPerInvoke) % Entries;
        int found = 0;
        for (int i = 0; i < LookupsPerInvoke; i++)
        {
            if (table.TryGet(BenchData.Key(keys, start + i), InternalKeys.MaxSequenceNumber, out _, out ReadOnlySpan<byte> v))
            {
                found += v.Length;
            }
        }
        return found;
    }

    private void FreeTableCore()
    {
        _table?.Dispose();
        _table = null;
    }
}
