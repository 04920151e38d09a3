using System.Buffers.Binary;
using KvEngine.Filters;
using KvEngine.Util;

namespace KvEngine.Tests.Filters;

// The measured false-positive rate of real filters must agree with FastLocalBloomMath's estimate
// (cache-local Bloom formula plus the 64-bit fingerprint term), which sizing decisions rely on.
public class FastLocalBloomFpRateTests
{
    private const int Queries = 2_000_000;

    [Theory]
    [InlineData(6.0, 50_000)]
    [InlineData(10.0, 50_000)]
    [InlineData(16.0, 100_000)]
    public void MeasuredFpRateIsWithinTenPercentOfTheEstimate(double bitsPerKey, int numKeys)
    {
        var policy = new FastLocalBloomPolicy(bitsPerKey);
        using FastLocalBloomBitsBuilder builder = policy.CreateBuilder();
        Span<byte> key = stackalloc byte[8];
        for (int i = 0; i < numKeys; i++)
        {
            BinaryPrimitives.WriteInt64LittleEndian(key, i);
            builder.AddKey(key);
        }
        using var output = new ByteBuffer();
        builder.Finish(output);
        IFilterBitsReader reader = policy.CreateReader(output.WrittenMemory);

        for (int i = 0; i < numKeys; i++)
        {
            BinaryPrimitives.WriteInt64LittleEndian(key, i);
            Assert.True(reader.MayMatch(key));
        }
        long falsePositives = 0;
        for (long i = 0; i < Queries; i++)
        {
            BinaryPrimitives.WriteInt64LittleEndian(key, (1L << 40) + i);
            falsePositives += reader.MayMatch(key) ? 1 : 0;
        }
        double measured = (double)falsePositives / Queries;
        double estimate = FastLocalBloomMath.EstimatedFpRate(numKeys, output.Length, policy.NumProbes);
        // Measured ratios (deterministic keys): 6 -> 1.009, 10 -> 1.016, 16 -> 1.074 (RocksDB notes
        // the estimate runs a little low at 16 bits/key: 0.0843% measured there).
        double ratio = measured / estimate;
        Assert.True(ratio is >= 0.9 and <= 1.1,
            $"{bitsPerKey} bits/key: measured {measured:P4}, estimate {estimate:P4}, ratio {ratio:F4}");
    }
}
