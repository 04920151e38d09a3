using KvEngine.Memory;

namespace KvEngine.Filters;

/// <summary>
/// Sizes FastLocalBloom filters so that their in-memory bit arrays fill a size class of our
/// allocator exactly (RocksDB's optimize_filters_for_memory, PR 6427, done with foreknowledge).
/// <para>
/// RocksDB cannot see the allocator's classes, so it tries smaller sizes, allocates, reads
/// malloc_usable_size and grows into it, steering with feedback. We know the classes
/// (<see cref="SizeClasses"/>), so for a filter whose default bit array is <c>T</c> bytes we take
/// directly one of the two classes that are whole 64-byte lines around it: the largest at most
/// <c>T</c> or the smallest at least <c>T</c> (T itself when it is a class). The choice keeps a
/// shared, signed balance — the sum over built filters of <c>(fp_chosen - fp_target) * 2^32</c>,
/// as RocksDB keeps it — closest to zero, so the mean FP rate per filter stays on the target
/// (sigma-delta rounding; the balance stays within one step of zero). Neighbouring classes are
/// at most 25% apart, so no filter strays further than that from its target size. FP rates
/// are <see cref="FastLocalBloomMath.EstimatedFpRate"/> with the probe count the size gives.
/// </para>
/// Thread-safe: the balance is updated with <see cref="Interlocked"/>; a race between two
/// builders can only skew one step, never lose an update.
/// </summary>
internal sealed class FilterMemoryOptimizer
{
    private const double BalanceScale = 4294967296.0;

    private long _balance;
    private long _filters;

    /// <summary>The running sum of <c>(fp_chosen - fp_target) * 2^32</c> over the filters sized so far.</summary>
    public long Balance => Interlocked.Read(ref _balance);

    /// <summary>Filters sized so far.</summary>
    public long FiltersSized => Interlocked.Read(ref _filters);

    /// <summary>
    /// The bit-array length (whole 64-byte lines, trailer excluded) for a filter of
    /// <paramref name="numKeys"/> keys at <paramref name="millibitsPerKey"/>; updates the balance.
    /// Zero keys give 0 (the filter is its trailer alone).
    /// </summary>
    public long ChooseBitsLength(long numKeys, int millibitsPerKey)
    {
        long target = FastLocalBloomMath.CalculateSpace(numKeys, millibitsPerKey) - FastLocalBloomMath.MetadataLength;
        if (target == 0 || target > SizeClasses.MaxSize || SizeClasses.IsClassSize(target))
        {
            return target;
        }
        long lo = SizeClasses.RoundDownToClass(target, FastLocalBloomMath.CacheLineBytes);
        long hi = SizeClasses.RoundUpToClass(target, FastLocalBloomMath.CacheLineBytes);
        if (hi == 0)
        {
            return target;
        }
        double targetFp = FpRate(numKeys, target);
        long upDelta = (long)((FpRate(numKeys, hi) - targetFp) * BalanceScale);
        long downDelta = lo == 0 ? long.MaxValue : (long)((FpRate(numKeys, lo) - targetFp) * BalanceScale);
        long balance = Interlocked.Read(ref _balance);
        bool down = lo != 0 && Math.Abs(balance + downDelta) <= Math.Abs(balance + upDelta);
        Interlocked.Add(ref _balance, down ? downDelta : upDelta);
        Interlocked.Increment(ref _filters);
        return down ? lo : hi;
    }

    /// <summary>Estimated FP rate of a bit array of <paramref name="bitsLength"/> bytes holding <paramref name="numKeys"/> keys.</summary>
    public static double FpRate(long numKeys, long bitsLength)
    {
        long lenWithMetadata = bitsLength + FastLocalBloomMath.MetadataLength;
        return FastLocalBloomMath.EstimatedFpRate(numKeys, lenWithMetadata, FastLocalBloomMath.NumProbesForSize(numKeys, lenWithMetadata));
    }
}
