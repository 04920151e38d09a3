using KvEngine.Filters;

namespace KvEngine.Tests.Filters;

public class FastLocalBloomMathTests
{
    [Theory]
    [InlineData(1.234, 1234)]
    [InlineData(3.456, 3456)]
    [InlineData(9.5, 9500)]
    [InlineData(10.0, 10000)]
    [InlineData(10.499, 10499)]
    [InlineData(21.345, 21345)]
    [InlineData(99.999, 99999)]
    [InlineData(1234.0, 100000)]
    [InlineData(double.PositiveInfinity, 100000)]
    [InlineData(double.NaN, 100000)]
    [InlineData(0.7, 1000)]
    [InlineData(0.4, 0)]
    [InlineData(double.NegativeInfinity, 0)]
    public void MillibitsPerKeySanitizesLikeRocksDb(double bitsPerKey, int expected)
    {
        Assert.Equal(expected, FastLocalBloomMath.MillibitsPerKey(bitsPerKey));
        // bloom_test FilterSize: a computed double a hair below the denoted one still rounds the same.
        if (double.IsFinite(bitsPerKey))
        {
            double computed = ((bitsPerKey + 0.5) / 1234567.0 * 1234567.0) - 0.5;
            Assert.Equal(expected, FastLocalBloomMath.MillibitsPerKey(computed));
        }
    }

    [Theory]
    [InlineData(1000, 1)]
    [InlineData(2080, 1)]
    [InlineData(2081, 2)]
    [InlineData(3580, 2)]
    [InlineData(5100, 3)]
    [InlineData(6000, 4)]
    [InlineData(6640, 4)]
    [InlineData(8300, 5)]
    [InlineData(10000, 6)]
    [InlineData(10070, 6)]
    [InlineData(10071, 7)]
    [InlineData(11720, 7)]
    [InlineData(14001, 8)]
    [InlineData(16000, 9)]
    [InlineData(16050, 9)]
    [InlineData(18300, 10)]
    [InlineData(22001, 11)]
    [InlineData(25501, 12)]
    [InlineData(28000, 12)]
    [InlineData(28001, 13)]
    [InlineData(50000, 23)]
    [InlineData(50001, 24)]
    [InlineData(100000, 24)]
    public void ChooseNumProbesFollowsRocksDbTable(int millibits, int probes)
    {
        Assert.Equal(probes, FastLocalBloomMath.ChooseNumProbes(millibits));
    }

    [Fact]
    public void CalculateSpaceRoundsUpToLinesPlusTrailer()
    {
        Assert.Equal(5, FastLocalBloomMath.CalculateSpace(0, 10000));
        Assert.Equal(69, FastLocalBloomMath.CalculateSpace(1, 10000));
        Assert.Equal(69, FastLocalBloomMath.CalculateSpace(51, 10000)); // 63.75 -> 64
        Assert.Equal(133, FastLocalBloomMath.CalculateSpace(52, 10000)); // 65 -> 128
        Assert.Equal(0xffffffc0L + 5, FastLocalBloomMath.CalculateSpace(long.MaxValue / 100000, 100000));
        Assert.Equal(5, FastLocalBloomMath.RoundDownUsableSpace(68));
        Assert.Equal(69, FastLocalBloomMath.RoundDownUsableSpace(69));
        Assert.Equal(69, FastLocalBloomMath.RoundDownUsableSpace(132));
        Assert.Equal(0, FastLocalBloomMath.ApproximateNumEntries(4, 10000));
        // Filter partitions: 4096 bytes at 10 bits/key hold about 3225 keys.
        Assert.Equal(3225, FastLocalBloomMath.ApproximateNumEntries(4096, 10000));
    }

    [Theory]
    [InlineData(1000)]
    [InlineData(1234)]
    [InlineData(9500)]
    [InlineData(10000)]
    [InlineData(21345)]
    [InlineData(100000)]
    public void CalculateSpaceAndApproximateNumEntriesAgree(int millibits)
    {
        // bloom_test FilterSize: the entries a size holds need that same size.
        for (long n = 1; n < 1000000; n += 1 + (n / 1000))
        {
            long space = FastLocalBloomMath.CalculateSpace(n, millibits);
            long n2 = FastLocalBloomMath.ApproximateNumEntries(space, millibits);
            Assert.True(n2 >= n);
            Assert.Equal(space, FastLocalBloomMath.CalculateSpace(n2, millibits));
        }
    }

    [Fact]
    public void ProbesAndBitsPerKeyDeriveFromAFinalSize()
    {
        Assert.Equal(10000, FastLocalBloomMath.ActualMillibitsPerKey(1000, 1250 + 5));
        Assert.Equal(6, FastLocalBloomMath.NumProbesForSize(1000, 1250 + 5));
        Assert.Equal(5, FastLocalBloomMath.NumProbesForSize(1000, 960 + 5));
        Assert.Equal(24, FastLocalBloomMath.NumProbesForSize(0, 64 + 5));
        Assert.Equal(7.68, FastLocalBloomMath.BitsPerKey(1000, 965), 10);
    }

    [Fact]
    public void EstimatedFpRateMatchesRocksDbFigures()
    {
        // "10 bits/key, num_probes=6 ... about 0.957%" (bloom_impl.h); the estimate is ~0.955%.
        double p = FastLocalBloomMath.EstimatedFpRate(1000, 1250 + 5, 6);
        Assert.InRange(p, 0.0094, 0.0097);
        Assert.Equal(1.0, FastLocalBloomMath.CacheLocalFpRate(0, 6, 512));
        // The 64-bit fingerprint term only shows with astronomically many keys.
        double b = 1e9 / Math.Pow(2, 64);
        Assert.Equal(b - (b * b / 2), FastLocalBloomMath.FingerprintFpRate(1_000_000_000, 64));
        Assert.Equal(1.0 - Math.Exp(-1.0), FastLocalBloomMath.FingerprintFpRate(1L << 32, 32), 12);
        Assert.Equal(0.28, FastLocalBloomMath.IndependentProbabilitySum(0.1, 0.2), 12);
    }
}
