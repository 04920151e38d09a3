using System.Text;
using KvEngine.Filters;
using KvEngine.Util;
using static KvEngine.Tests.Filters.FilterTestKeys;

namespace KvEngine.Tests.Filters;

public class FastLocalBloomBuilderTests
{
    [Fact]
    public void SmallFilterMatchesItsKeysOnly()
    {
        var policy = new FastLocalBloomPolicy();
        Assert.Equal("rocksdb.BuiltinBloomFilter", policy.Name);
        using FastLocalBloomBitsBuilder builder = policy.CreateBuilder();
        builder.AddKey("hello"u8);
        builder.AddKey("world"u8);
        using var output = new ByteBuffer();
        builder.Finish(output);
        IFilterBitsReader reader = policy.CreateReader(output.WrittenMemory);
        Assert.True(reader.MayMatch("hello"u8));
        Assert.True(reader.MayMatch("world"u8));
        Assert.False(reader.MayMatch("x"u8));
        Assert.False(reader.MayMatch("foo"u8));
    }

    [Fact]
    public void VaryingLengthsHaveNoFalseNegativesAndFewFalsePositives()
    {
        // bloom_test FullVaryingLengths at 10 bits/key.
        int mediocre = 0;
        int good = 0;
        for (int length = 1; length <= 10000; length = NextLength(length))
        {
            byte[] filter = Build(10, 0, length);
            Assert.True(filter.Length <= (length * 10 / 8) + (64 * 2) + 5);
            IFilterBitsReader reader = BuiltinFilterReaders.Create(filter);
            for (int i = 0; i < length; i++)
            {
                Assert.True(reader.MayMatch(Key(i)), $"length {length}, key {i}");
            }
            int fps = 0;
            for (int i = 0; i < 10000; i++)
            {
                fps += reader.MayMatch(Key(i + 1000000000)) ? 1 : 0;
            }
            double rate = fps / 10000.0;
            Assert.True(rate <= 0.02, $"FP rate {rate} at length {length}");
            if (rate > 0.0125)
            {
                mediocre++;
            }
            else
            {
                good++;
            }
        }
        Assert.True(mediocre <= good / 5);
    }

    [Fact]
    public void ConsecutiveDuplicatesCountOnceAndBuilderResetsAfterFinish()
    {
        using FastLocalBloomBitsBuilder builder = new FastLocalBloomPolicy().CreateBuilder();
        builder.AddKey("a"u8);
        builder.AddKey("a"u8);
        builder.AddKey("b"u8);
        builder.AddKey("a"u8);
        Assert.Equal(3, builder.KeyCount);
        using var first = new ByteBuffer();
        builder.Finish(first);
        Assert.Equal(0, builder.KeyCount);

        builder.AddKey("a"u8);
        builder.AddKey("b"u8);
        builder.AddKey("a"u8);
        using var second = new ByteBuffer();
        builder.Finish(second);
        Assert.Equal(first.WrittenSpan.ToArray(), second.WrittenSpan.ToArray());
    }

    [Fact]
    public void ManyKeysGrowTheHashBufferWithoutFalseNegatives()
    {
        const int n = 100_000;
        byte[] filter = Build(10, 0, n);
        Assert.Equal(FastLocalBloomMath.CalculateSpace(n, 10000), filter.Length);
        IFilterBitsReader reader = BuiltinFilterReaders.Create(filter);
        for (int i = 0; i < n; i++)
        {
            Assert.True(reader.MayMatch(Key(i)));
        }
    }

    [Theory]
    [InlineData(FastLocalBloomBitsBuilder.ChunkHashes)]
    [InlineData(FastLocalBloomBitsBuilder.ChunkHashes + 1)]
    [InlineData((3 * FastLocalBloomBitsBuilder.ChunkHashes) - 1)]
    [InlineData(100_000)]
    public void LargeFiltersKeepTheirHashesInNativeMemoryUntilFinished(int n)
    {
        // Past BoundedArrayPool's limit (8192 hashes) the hashes move to native memory; the filter
        // must be the one RocksDB's per-key AddHash gives, and finishing frees the native block so a
        // table builder holds no large buffer between filters (and leaves no large array to the GC).
        // The hashes sit in chunks, never copied: at most one chunk more than the hashes is held
        // (a doubling buffer held 131,072 for 100,000).
        using var builder = new FastLocalBloomBitsBuilder(10000);
        for (int round = 0; round < 2; round++)
        {
            for (int i = 0; i < n; i++)
            {
                builder.AddKey(Key(i + round));
            }
            Assert.True(builder.BufferBytes >= n * sizeof(ulong), $"buffer {builder.BufferBytes}");
            Assert.True(builder.BufferBytes <= (n + FastLocalBloomBitsBuilder.ChunkHashes) * sizeof(ulong), $"buffer {builder.BufferBytes} for {n} hashes");
            Assert.Equal(n, builder.KeyCount);
            var output = new System.Buffers.ArrayBufferWriter<byte>();
            builder.Finish(output);
            Assert.True(builder.BufferBytes <= BoundedArrayPool<ulong>.PooledLimitBytes, $"after finish {builder.BufferBytes}");
            Assert.Equal(0, builder.KeyCount);

            byte[] filter = output.WrittenSpan.ToArray();
            int bitsLength = filter.Length - FastLocalBloomMath.MetadataLength;
            var expected = new byte[bitsLength];
            int probes = FastLocalBloomMath.ChooseNumProbes(10000);
            for (int i = 0; i < n; i++)
            {
                FastLocalBloomImpl.AddHash(XxPh3.Hash64(Key(i + round)), (uint)(bitsLength / 64), probes, expected);
            }
            Assert.True(expected.AsSpan().SequenceEqual(filter.AsSpan(0, bitsLength)), $"round {round}: filter bits differ from per-key adds");
        }
    }

    [Fact]
    public void AddingKeysAndQueryingDoNotAllocate()
    {
        var policy = new FastLocalBloomPolicy();
        using FastLocalBloomBitsBuilder builder = policy.CreateBuilder();
        Span<byte> key = stackalloc byte[16];
        using var output = new ByteBuffer(1 << 16);
        // A per-key allocation shows in every round; the runtime's own one-off allocations (a
        // class initializer or tier-up reached in a later round, under load) in at most one. So
        // each measurement is repeated and the smallest must be 0.
        long fewestAdded = long.MaxValue;
        for (int round = 0; round < 4; round++)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            for (int i = 0; i < 20000; i++)
            {
                BitConverter.TryWriteBytes(key, i);
                builder.AddKey(key);
            }
            long added = GC.GetAllocatedBytesForCurrentThread() - before;
            output.Clear();
            builder.Finish(output);
            if (round > 0)
            {
                fewestAdded = Math.Min(fewestAdded, added); // the pooled buffer was sized by round 0
            }
        }
        Assert.Equal(0, fewestAdded);
        IFilterBitsReader reader = policy.CreateReader(output.WrittenMemory);
        int matches = 0;
        long fewestQueried = long.MaxValue;
        for (int round = 0; round < 3; round++)
        {
            long start = GC.GetAllocatedBytesForCurrentThread();
            for (int i = 0; i < 40000; i++)
            {
                BitConverter.TryWriteBytes(key, i);
                matches += reader.MayMatch(key) ? 1 : 0;
            }
            fewestQueried = Math.Min(fewestQueried, GC.GetAllocatedBytesForCurrentThread() - start);
        }
        Assert.Equal(0, fewestQueried);
        Assert.True(matches >= 3 * 20000); // every added key matches in each of the 3 rounds
    }

    [Fact]
    public void FinishAtACallerChosenSizeUsesThatSizeAndItsProbes()
    {
        using FastLocalBloomBitsBuilder builder = new FastLocalBloomPolicy().CreateBuilder();
        for (int i = 0; i < 1000; i++)
        {
            builder.AddKey(Key(i));
        }
        long target = builder.CalculateSpace(); // 1250 -> 1280 + 5
        Assert.Equal(1285, target);
        long smaller = FastLocalBloomMath.RoundDownUsableSpace((3 * (target - 5) / 4) + 5); // 960 + 5
        Assert.Equal(965, smaller);
        using var output = new ByteBuffer();
        builder.Finish(output, smaller, probesFromActualSize: true);
        byte[] filter = output.WrittenSpan.ToArray();
        Assert.Equal(965, filter.Length);
        Assert.Equal(FastLocalBloomMath.ChooseNumProbes(7680), filter[^3]); // 7.68 bits/key -> 5
        IFilterBitsReader reader = BuiltinFilterReaders.Create(filter);
        for (int i = 0; i < 1000; i++)
        {
            Assert.True(reader.MayMatch(Key(i)));
        }
        for (int i = 0; i < 10; i++)
        {
            builder.AddKey(Key(i));
        }
        Assert.Throws<ArgumentException>(() => builder.Finish(output, 100, probesFromActualSize: false));
        Assert.Throws<ArgumentOutOfRangeException>(() => builder.Finish(output, 4, probesFromActualSize: false));
    }

    [Fact]
    public void PolicyRejectsNoFilterSettingsAndUseAfterDisposeFails()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new FastLocalBloomPolicy(0.4));
        Assert.Throws<ArgumentOutOfRangeException>(() => new FastLocalBloomPolicy(-1));
        FastLocalBloomBitsBuilder builder = new FastLocalBloomPolicy().CreateBuilder();
        builder.Dispose();
        Assert.Throws<ObjectDisposedException>(() => builder.AddKey(Encoding.ASCII.GetBytes("k")));
    }

    private static int NextLength(int length) => length switch
    {
        < 10 => length + 1,
        < 100 => length + 10,
        < 1000 => length + 100,
        _ => length + 1000,
    };
}
