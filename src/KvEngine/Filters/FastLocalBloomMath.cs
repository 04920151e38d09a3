namespace KvEngine.Filters;

/// <summary>
/// Sizing, probe-count and false-positive arithmetic of RocksDB's FastLocalBloom filter
/// (util/bloom_impl.h BloomMath / FastLocalBloomImpl, table/block_based/filter_policy.cc
/// FastLocalBloomBitsBuilder). Lengths called <c>lenWithMetadata</c> include the 5-byte trailer.
/// Every size rule here decides on-disk bytes, so each mirrors RocksDB 7.8 exactly, including its
/// rounding. Stateless and thread-safe.
/// </summary>
internal static class FastLocalBloomMath
{
    /// <summary>Bytes of the filter trailer (marker, sub-implementation, probes, two reserved).</summary>
    public const int MetadataLength = 5;

    /// <summary>Bytes per cache-line block; every probe of one key stays in one block.</summary>
    public const int CacheLineBytes = 64;

    /// <summary>Bits per cache-line block.</summary>
    public const int CacheLineBits = CacheLineBytes * 8;

    /// <summary>Largest bit array (without trailer) the format supports: 2^32 - 64 bytes.</summary>
    public const long MaxBitsLength = 0xffffffc0L;

    /// <summary>
    /// RocksDB's BloomLikeFilterPolicy sanitizing of bits_per_key into millibits per key:
    /// below 0.5 gives 0 ("no filter"), below 1 gives 1000, 100 and above (and NaN) give 100000,
    /// otherwise round(bits * 1000) with a tiny nudge up so three-decimal inputs are exact.
    /// </summary>
    public static int MillibitsPerKey(double bitsPerKey)
    {
        if (bitsPerKey < 0.5)
        {
            return 0;
        }
        if (bitsPerKey < 1.0)
        {
            bitsPerKey = 1.0;
        }
        else if (!(bitsPerKey < 100.0))
        {
            bitsPerKey = 100.0;
        }
        return (int)((bitsPerKey * 1000.0) + 0.500001);
    }

    /// <summary>
    /// FastLocalBloomImpl::ChooseNumProbes: the probe count (1..24) measured most accurate for a
    /// cache-local Bloom filter at this many millibits per key.
    /// </summary>
    public static int ChooseNumProbes(int millibitsPerKey) => millibitsPerKey switch
    {
        <= 2080 => 1,
        <= 3580 => 2,
        <= 5100 => 3,
        <= 6640 => 4,
        <= 8300 => 5,
        <= 10070 => 6,
        <= 11720 => 7,
        <= 14001 => 8,
        <= 16050 => 9,
        <= 18300 => 10,
        <= 22001 => 11,
        <= 25501 => 12,
        > 50000 => 24,
        _ => ((millibitsPerKey - 1) / 2000) - 1,
    };

    /// <summary>
    /// FastLocalBloomBitsBuilder::CalculateSpace: <c>ceil(keys * millibits / 8000)</c> bytes, capped
    /// at <see cref="MaxBitsLength"/>, rounded up to whole 64-byte lines, plus the trailer. Zero keys
    /// give the 5-byte trailer alone (a filter that matches nothing).
    /// </summary>
    public static long CalculateSpace(long numKeys, int millibitsPerKey)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(numKeys);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(millibitsPerKey);
        ulong raw = (((ulong)numKeys * (ulong)millibitsPerKey) + 7999) / 8000;
        if (raw >= (ulong)MaxBitsLength)
        {
            raw = (ulong)MaxBitsLength;
        }
        return (long)((raw + 63) & ~63UL) + MetadataLength;
    }

    /// <summary>
    /// FastLocalBloomBitsBuilder::RoundDownUsableSpace: the largest valid filter length (whole
    /// 64-byte lines plus trailer) that fits in <paramref name="availableBytes"/> (at least 5).
    /// </summary>
    public static long RoundDownUsableSpace(long availableBytes)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(availableBytes, MetadataLength);
        long bits = Math.Min(availableBytes - MetadataLength, MaxBitsLength);
        return (bits & ~63L) + MetadataLength;
    }

    /// <summary>
    /// FastLocalBloomBitsBuilder::ApproximateNumEntries: how many keys a filter of at most
    /// <paramref name="bytes"/> bytes holds at this density (used to cut filter partitions).
    /// </summary>
    public static long ApproximateNumEntries(long bytes, int millibitsPerKey)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(millibitsPerKey);
        long bytesNoMeta = bytes >= MetadataLength ? RoundDownUsableSpace(bytes) - MetadataLength : 0;
        return (long)(8000UL * (ulong)bytesNoMeta / (ulong)millibitsPerKey);
    }

    /// <summary>
    /// Millibits per key that a filter of <paramref name="lenWithMetadata"/> bytes actually gives
    /// <paramref name="numKeys"/> keys (RocksDB's GetNumProbes arithmetic; 0 keys count as 1).
    /// </summary>
    public static int ActualMillibitsPerKey(long numKeys, long lenWithMetadata)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(numKeys);
        ArgumentOutOfRangeException.ThrowIfLessThan(lenWithMetadata, MetadataLength);
        ulong millibits = (ulong)(lenWithMetadata - MetadataLength) * 8000;
        ulong perKey = millibits / (ulong)Math.Max(numKeys, 1);
        return perKey > int.MaxValue ? int.MaxValue : (int)perKey;
    }

    /// <summary>
    /// Probe count for a filter whose final size was chosen after the fact (optimize_filters_for_memory):
    /// from the bits per key the final size gives, not the configured ones.
    /// </summary>
    public static int NumProbesForSize(long numKeys, long lenWithMetadata) =>
        ChooseNumProbes(ActualMillibitsPerKey(numKeys, lenWithMetadata));

    /// <summary>Bits per key of a filter of <paramref name="lenWithMetadata"/> bytes (trailer excluded).</summary>
    public static double BitsPerKey(long numKeys, long lenWithMetadata)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(lenWithMetadata, MetadataLength);
        return 8.0 * (lenWithMetadata - MetadataLength) / numKeys;
    }

    /// <summary>
    /// FastLocalBloomImpl::EstimatedFpRate: the cache-local Bloom rate for the filter's bits per key
    /// combined with the chance of a 64-bit hash collision among <paramref name="numKeys"/> keys.
    /// </summary>
    public static double EstimatedFpRate(long numKeys, long lenWithMetadata, int numProbes) =>
        IndependentProbabilitySum(
            CacheLocalFpRate(BitsPerKey(numKeys, lenWithMetadata), numProbes, CacheLineBits),
            FingerprintFpRate(numKeys, 64));

    /// <summary>Standard Bloom filter FP rate: <c>(1 - e^(-k / bitsPerKey))^k</c>.</summary>
    public static double StandardFpRate(double bitsPerKey, int numProbes) =>
        Math.Pow(1.0 - Math.Exp(-numProbes / bitsPerKey), numProbes);

    /// <summary>
    /// FP rate of a cache-local ("blocked") Bloom filter: the average of the standard rate for a
    /// line one standard deviation more crowded and one less crowded than the mean.
    /// </summary>
    public static double CacheLocalFpRate(double bitsPerKey, int numProbes, int cacheLineBits)
    {
        if (bitsPerKey <= 0.0)
        {
            return 1.0;
        }
        double keysPerLine = cacheLineBits / bitsPerKey;
        double keysStdDev = Math.Sqrt(keysPerLine);
        double crowded = StandardFpRate(cacheLineBits / (keysPerLine + keysStdDev), numProbes);
        double uncrowded = StandardFpRate(cacheLineBits / (keysPerLine - keysStdDev), numProbes);
        return (crowded + uncrowded) / 2;
    }

    /// <summary>Chance a new key's <paramref name="fingerprintBits"/>-bit hash equals one of <paramref name="numKeys"/> stored ones.</summary>
    public static double FingerprintFpRate(long numKeys, int fingerprintBits)
    {
        double baseEstimate = numKeys * Math.Pow(0.5, fingerprintBits);
        return baseEstimate > 0.0001
            ? 1.0 - Math.Exp(-baseEstimate)
            : baseEstimate - (baseEstimate * baseEstimate * 0.5);
    }

    /// <summary>Probability of either of two independent events: <c>p1 + p2 - p1 * p2</c>.</summary>
    public static double IndependentProbabilitySum(double rate1, double rate2) => rate1 + rate2 - (rate1 * rate2);
}
