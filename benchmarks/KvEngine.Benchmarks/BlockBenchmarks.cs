using BenchmarkDotNet.Attributes;
using KvEngine.Format;
using KvEngine.Table;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Benchmarks;

/// <summary>
/// Data blocks: building a 4 KiB block (<see cref="BlockBuilder"/>, restart interval 16, as many
/// 16-byte-key / 100-byte-value entries as fit, as the table builder cuts blocks), seeking in it and
/// iterating it (<see cref="Block"/>, <see cref="BlockIterator"/>). Seek and Next are reported per
/// entry. Public and unsealed for BenchmarkDotNet; single-threaded.
/// </summary>
[MemoryDiagnoser]
[SimpleJob(launchCount: 1, warmupCount: 3, iterationCount: 5)]
public class BlockBenchmarks
{
    private const int BlockSize = 4096;
    private const int RestartInterval = 16;

    /// <summary>Entries in the block: 16-byte user key + 8-byte trailer, 100-byte value, in 4 KiB.</summary>
    private const int EntriesPerBlock = 32;

    private byte[][] _internalKeys = [];
    private byte[][] _seekTargets = [];
    private byte[] _value = [];
    private BlockBuilder? _builder;
    private Block? _block;
    private BlockIterator? _iterator;

    [GlobalSetup]
    public void GlobalSetup()
    {
        byte[][] userKeys = BenchData.SortedRandomKeys(EntriesPerBlock, seed: 4);
        _internalKeys = new byte[EntriesPerBlock][];
        _seekTargets = new byte[EntriesPerBlock][];
        for (int i = 0; i < EntriesPerBlock; i++)
        {
            _internalKeys[i] = InternalKeys.Create(userKeys[i], (ulong)i + 1, ValueType.Value);
            _seekTargets[i] = InternalKeys.Create(userKeys[i], InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek);
        }
        // Seek in an order unrelated to the key order, so the branch predictor cannot learn the path.
        new Random(5).Shuffle(_seekTargets);
        _value = BenchData.RandomBytes(BenchData.ValueSize, seed: 6);

        _builder = new BlockBuilder(RestartInterval);
        for (int i = 0; i < EntriesPerBlock; i++)
        {
            if (_builder.EstimateSizeAfterKV(_internalKeys[i].Length, _value.Length) > BlockSize)
            {
                throw new InvalidOperationException($"Entry {i} does not fit a {BlockSize}-byte block; lower EntriesPerBlock.");
            }
            _builder.Add(_internalKeys[i], _value);
        }
        if (_builder.EstimateSizeAfterKV(_internalKeys[0].Length, _value.Length) <= BlockSize)
        {
            throw new InvalidOperationException($"A {BlockSize}-byte block holds more than {EntriesPerBlock} entries; raise EntriesPerBlock.");
        }
        byte[] contents = _builder.Finish().ToArray();
        _block = new Block(contents, contents.Length, pooled: false, isDataBlock: true, "benchmark");
        _iterator = new BlockIterator(_block, BlockKeyFormat.InternalKey, ownsBlock: false);
    }

    [GlobalCleanup]
    public void GlobalCleanup()
    {
        _iterator?.Dispose();
        _block?.Dispose();
        _builder?.Dispose();
    }

    /// <summary>One whole block: Reset, <see cref="EntriesPerBlock"/> Adds, Finish.</summary>
    [Benchmark]
    public int Build()
    {
        BlockBuilder builder = _builder!;
        builder.Reset();
        byte[][] keys = _internalKeys;
        for (int i = 0; i < keys.Length; i++)
        {
            builder.Add(keys[i], _value);
        }
        return builder.Finish().Length;
    }

    [Benchmark(OperationsPerInvoke = EntriesPerBlock)]
    public int Seek()
    {
        BlockIterator it = _iterator!;
        byte[][] targets = _seekTargets;
        int sum = 0;
        for (int i = 0; i < targets.Length; i++)
        {
            it.Seek(targets[i]);
            sum += it.Value.Length;
        }
        return sum;
    }

    /// <summary>SeekToFirst and Next over every entry; reported per entry.</summary>
    [Benchmark(OperationsPerInvoke = EntriesPerBlock)]
    public int Iterate()
    {
        BlockIterator it = _iterator!;
        int sum = 0;
        for (it.SeekToFirst(); it.Valid; it.Next())
        {
            sum += it.Key.Length + it.Value.Length;
        }
        return sum;
    }
}
