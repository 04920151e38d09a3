using KvEngine.Memory;

namespace KvEngine.Filters;

/// <summary>
/// RocksDB's built-in Bloom filter policy for format_version 5 (NewBloomFilterPolicy): builds
/// FastLocalBloom full filters and reads every built-in filter format RocksDB may have written
/// (see <see cref="BuiltinFilterReaders"/>). Bits per key are sanitized as RocksDB does
/// (<see cref="FastLocalBloomMath.MillibitsPerKey"/>); a setting that RocksDB reads as "no filter"
/// (below 0.5) is rejected, since the caller then wants no policy at all. Builders asked to optimize
/// for memory share this policy's <see cref="MemoryOptimizer"/> (its FP-rate balance spans every
/// table built with the policy, as RocksDB's aggregate_rounding_balance_ does). Thread-safe; the
/// settings are immutable.
/// </summary>
internal sealed class FastLocalBloomPolicy : IFilterPolicy
{
    /// <summary>The name RocksDB stores in metaindex keys ("fullfilter." + name). Persisted.</summary>
    public const string PolicyName = "rocksdb.BuiltinBloomFilter";

    public FastLocalBloomPolicy(double bitsPerKey = 10)
    {
        int millibits = FastLocalBloomMath.MillibitsPerKey(bitsPerKey);
        if (millibits == 0)
        {
            throw new ArgumentOutOfRangeException(nameof(bitsPerKey), bitsPerKey,
                "Bits per key below 0.5 means no filter; configure no filter policy instead.");
        }
        MillibitsPerKey = millibits;
    }

    /// <summary>Sizes filters of builders created with optimizeForMemory; shared by all of them.</summary>
    public FilterMemoryOptimizer MemoryOptimizer { get; } = new();

    public string Name => PolicyName;

    /// <summary>Target density in thousandths of a bit per key (1000..100000).</summary>
    public int MillibitsPerKey { get; }

    /// <summary>Bits per key rounded to a whole number, as RocksDB's legacy format would use.</summary>
    public int WholeBitsPerKey => (MillibitsPerKey + 500) / 1000;

    /// <summary>Probes per key in filters built at the configured density.</summary>
    public int NumProbes => FastLocalBloomMath.ChooseNumProbes(MillibitsPerKey);

    IFilterBitsBuilder IFilterPolicy.CreateBuilder() => CreateBuilder();

    public FastLocalBloomBitsBuilder CreateBuilder() => new(MillibitsPerKey);

    IFilterBitsBuilder IFilterPolicy.CreateBuilder(bool optimizeForMemory) => CreateBuilder(optimizeForMemory);

    /// <summary>A builder that, with <paramref name="optimizeForMemory"/>, sizes filters to fill size classes.</summary>
    public FastLocalBloomBitsBuilder CreateBuilder(bool optimizeForMemory) =>
        new(MillibitsPerKey, optimizeForMemory ? MemoryOptimizer : null);

    /// <summary>FastLocalBloom blocks go to native memory as bare bit arrays; other formats to the managed heap.</summary>
    public IFilterBitsReader LoadReader(ReadOnlySpan<byte> filterBlock, NativeAllocator allocator) =>
        BuiltinFilterReaders.Load(filterBlock, allocator);

    public IFilterBitsReader CreateReader(ReadOnlyMemory<byte> filterBlock) => BuiltinFilterReaders.Create(filterBlock);

    /// <summary>Filter length, trailer included, for <paramref name="numKeys"/> keys at the configured density.</summary>
    public long CalculateSpace(long numKeys) => FastLocalBloomMath.CalculateSpace(numKeys, MillibitsPerKey);

    /// <summary>Keys that fit a filter of at most <paramref name="bytes"/> bytes at the configured density.</summary>
    public long ApproximateNumEntries(long bytes) => FastLocalBloomMath.ApproximateNumEntries(bytes, MillibitsPerKey);
}
