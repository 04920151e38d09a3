using System.Buffers;
using BenchmarkDotNet.Attributes;
using KvEngine.Filters;

namespace KvEngine.Benchmarks;

/// <summary>
/// The FastLocalBloom full filter at 10 bits per key: adding <see cref="Keys"/> 16-byte keys and
/// finishing the filter block (reported per key), and querying keys that were added and keys that
/// were not, through <see cref="IFilterBitsReader"/> as the table reader does. Public and unsealed
/// for BenchmarkDotNet; single-threaded.
/// </summary>
[MemoryDiagnoser]
[SimpleJob(launchCount: 1, warmupCount: 3, iterationCount: 5)]
public class FilterBenchmarks
{
    /// <summary>Keys per filter: about a 12 MiB table of 116-byte entries.</summary>
    private const int Keys = 100_000;
    private const int QueriesPerInvoke = 1_000;

    private byte[] _keys = [];
    private byte[] _absentKeys = [];
    private FastLocalBloomBitsBuilder? _builder;
    private ArrayBufferWriter<byte> _output = new();
    private IFilterBitsReader? _reader;
    private int _next;

    [GlobalSetup]
    public void GlobalSetup()
    {
        _keys = BenchData.RandomKeys(Keys, seed: 7);
        _absentKeys = BenchData.RandomKeys(Keys, seed: 8);
        var policy = new FastLocalBloomPolicy(bitsPerKey: 10);
        _builder = policy.CreateBuilder();
        _output = new ArrayBufferWriter<byte>((int)policy.CalculateSpace(Keys));
        AddKeysAndFinish();
        _reader = policy.CreateReader(_output.WrittenMemory.ToArray());
    }

    [GlobalCleanup]
    public void GlobalCleanup() => _builder?.Dispose();

    /// <summary>AddKey for every key, then Finish into a reused buffer; reported per key.</summary>
    [Benchmark(OperationsPerInvoke = Keys)]
    public int AddKeysAndFinish()
    {
        FastLocalBloomBitsBuilder builder = _builder!;
        for (int i = 0; i < Keys; i++)
        {
            builder.AddKey(BenchData.Key(_keys, i));
        }
        _output.ResetWrittenCount();
        builder.Finish(_output);
        return _output.WrittenCount;
    }

    [Benchmark(OperationsPerInvoke = QueriesPerInvoke)]
    public int MayMatchPresent() => Queries(_keys);

    [Benchmark(OperationsPerInvoke = QueriesPerInvoke)]
    public int MayMatchAbsent() => Queries(_absentKeys);

    /// <summary>The next <see cref="QueriesPerInvoke"/> keys of <paramref name="keys"/>, wrapping around.</summary>
    private int Queries(byte[] keys)
    {
        IFilterBitsReader reader = _reader!;
        int start = _next;
        _next = (start + QueriesPerInvoke) % Keys;
        int matches = 0;
        for (int i = 0; i < QueriesPerInvoke; i++)
        {
            if (reader.MayMatch(BenchData.Key(keys, start + i)))
            {
                matches++;
            }
        }
        return matches;
    }
}
