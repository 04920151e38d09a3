using System.Buffers;
using KvEngine.Filters;
using KvEngine.Memory;
using KvEngine.Util;
using static KvEngine.Tests.Filters.FilterTestKeys;

namespace KvEngine.Tests.Filters;

/// <summary>
/// A filter sized up front for a known key count (<see cref="FastLocalBloomBitsBuilder.TryPresize"/>,
/// a flush's): the same filter the buffered path writes for that count, without a hash kept per key.
/// </summary>
public class FastLocalBloomPresizeTests
{
    private static byte[] Finish(FastLocalBloomBitsBuilder builder)
    {
        var output = new ArrayBufferWriter<byte>();
        builder.Finish(output);
        return output.WrittenSpan.ToArray();
    }

    [Theory]
    [InlineData(1)]
    [InlineData(100)]
    [InlineData(FastLocalBloomBitsBuilder.ChunkHashes + 1)]
    [InlineData(100_000)]
    public void APresizedFilterForTheExactCountIsTheBufferedFilterAndKeepsNoHashes(int n)
    {
        using var buffered = new FastLocalBloomBitsBuilder(10000);
        using var presized = new FastLocalBloomBitsBuilder(10000);
        long pooledBytes = presized.BufferBytes;
        Assert.True(presized.TryPresize(n));
        Assert.True(presized.IsPresized);
        for (int i = 0; i < n; i++)
        {
            buffered.AddKey(Key(i));
            presized.AddKey(Key(i));
            presized.AddKey(Key(i)); // a consecutive duplicate counts once, as buffered
        }
        Assert.Equal(n, presized.KeyCount);
        Assert.Equal(pooledBytes, presized.BufferBytes); // no chunk: the hashes were not kept
        Assert.Equal(Finish(buffered), Finish(presized));
        Assert.False(presized.IsPresized);
        Assert.Equal(0, presized.KeyCount);

        // Finished, it buffers again: the next filter matches a fresh builder's.
        for (int i = 0; i < 10; i++)
        {
            presized.AddKey(Key(i + n));
            buffered.AddKey(Key(i + n));
        }
        Assert.Equal(Finish(buffered), Finish(presized));
    }

    [Fact]
    public void FewerKeysThanExpectedGiveTheExpectedCountsFilterWithoutFalseNegatives()
    {
        const int expected = 50_000;
        const int actual = 30_000;
        using var builder = new FastLocalBloomBitsBuilder(10000);
        Assert.True(builder.TryPresize(expected));
        for (int i = 0; i < actual; i++)
        {
            builder.AddKey(Key(i));
        }
        byte[] filter = Finish(builder);
        Assert.Equal(FastLocalBloomMath.CalculateSpace(expected, 10000), filter.Length);
        Assert.Equal(FastLocalBloomMath.ChooseNumProbes(10000), filter[^3]);
        IFilterBitsReader reader = BuiltinFilterReaders.Create(filter);
        int falsePositives = 0;
        for (int i = 0; i < actual; i++)
        {
            Assert.True(reader.MayMatch(Key(i)));
        }
        for (int i = 0; i < 20_000; i++)
        {
            falsePositives += reader.MayMatch(Key(i + 1_000_000_000)) ? 1 : 0;
        }
        Assert.True(falsePositives < 20_000 * 0.01, $"{falsePositives} false positives"); // sharper than its 10-bit target
    }

    [Fact]
    public void APresizedFilterThatGetsNoKeyIsTheEmptyFilter()
    {
        using var builder = new FastLocalBloomBitsBuilder(10000);
        using var empty = new FastLocalBloomBitsBuilder(10000);
        Assert.True(builder.TryPresize(1000));
        Assert.Equal(Finish(empty), Finish(builder));
        Assert.Equal(FastLocalBloomMath.MetadataLength, Finish(builder).Length);
    }

    [Fact]
    public void OptimizedForMemoryAPresizedFilterFillsASizeClassWithTheProbesOfItsSize()
    {
        const int n = 20_000;
        var policy = new FastLocalBloomPolicy(10);
        using FastLocalBloomBitsBuilder builder = policy.CreateBuilder(optimizeForMemory: true);
        Assert.True(builder.TryPresize(n));
        for (int i = 0; i < n; i++)
        {
            builder.AddKey(Key(i));
        }
        byte[] filter = Finish(builder);
        int bitsLength = filter.Length - FastLocalBloomMath.MetadataLength;
        Assert.True(SizeClasses.IsClassSize(bitsLength), $"{bitsLength} bytes");
        Assert.Equal(FastLocalBloomMath.NumProbesForSize(n, filter.Length), filter[^3]);
        IFilterBitsReader reader = BuiltinFilterReaders.Create(filter);
        for (int i = 0; i < n; i++)
        {
            Assert.True(reader.MayMatch(Key(i)));
        }
    }

    [Fact]
    public void PresizingIsRefusedOnceKeysCameOrForNoKeysAndAPresizedFilterHasOneSize()
    {
        using var builder = new FastLocalBloomBitsBuilder(10000);
        Assert.False(builder.TryPresize(0));
        Assert.False(builder.TryPresize(-1));
        builder.AddKey(Key(1));
        Assert.False(builder.TryPresize(100)); // keys already buffered
        Finish(builder);

        Assert.True(builder.TryPresize(100));
        Assert.False(builder.TryPresize(200)); // already presized
        builder.AddKey(Key(1));
        Assert.Throws<InvalidOperationException>(() => builder.Finish(new ArrayBufferWriter<byte>(), 64 + FastLocalBloomMath.MetadataLength, probesFromActualSize: false));
        Assert.Throws<InvalidOperationException>(() => builder.FinishInMemory(NativeAllocator.Shared));
        Assert.Equal(FastLocalBloomMath.CalculateSpace(100, 10000), Finish(builder).Length);
    }
}
