using K4os.Compression.LZ4;
using KvEngine.Compression;

namespace KvEngine.Tests.Compression;

/// <summary>
/// Our LZ4 block compressor writes standard LZ4 blocks: K4os (an independent decoder; liblz4 reads
/// them in the RocksDB interop tests) restores every input exactly, for every size and shape,
/// every acceleration, and a destination too small never overflows.
/// </summary>
public class Lz4BlockEncoderTests
{
    private static byte[] Data(int length, int shape, int seed) => CodecTestData.Data(length, shape, seed);

    public static IEnumerable<object[]> Cases()
    {
        int[] sizes = [0, 1, 5, 12, 13, 14, 20, 64, 255, 256, 4096, 65_535, 65_536, 65_547, 200_000, 1 << 20];
        foreach (int size in sizes)
        {
            for (int shape = 0; shape < CodecTestData.Shapes; shape++)
            {
                yield return [size, shape];
            }
        }
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public void K4osRestoresEveryInputAtEveryAcceleration(int size, int shape)
    {
        byte[] raw = Data(size, shape, size * 31 + shape);
        foreach (int acceleration in new[] { 1, 2, 17 })
        {
            var compressed = new byte[LZ4Codec.MaximumOutputSize(size)];
            int n = Lz4BlockEncoder.Compress(raw, compressed, acceleration);
            Assert.True(n > 0, $"size {size} shape {shape}: {n}");
            if (size == 0)
            {
                Assert.Equal(new byte[] { 0 }, compressed.AsSpan(0, n).ToArray()); // liblz4's block for no input
                continue;
            }
            var back = new byte[size];
            Assert.Equal(size, LZ4Codec.Decode(compressed.AsSpan(0, n), back));
            Assert.Equal(raw, back);
            if (shape == 2 && size > 1000)
            {
                Assert.True(n < size / 50, $"{n} bytes for {size} equal bytes");
            }
        }
    }

    /// <summary>Random structures (runs, repeats at repeated distances, block ends): K4os restores every one.</summary>
    [Fact]
    public void RandomStructuresRoundTrip()
    {
        var rnd = new Random(20261127);
        for (int trial = 0; trial < 400; trial++)
        {
            byte[] raw = CodecTestData.Segments(rnd, rnd.Next(1, 100_000));
            var compressed = new byte[LZ4Codec.MaximumOutputSize(raw.Length)];
            int n = Lz4BlockEncoder.Compress(raw, compressed, 1 + (trial % 3));
            Assert.True(n > 0, $"trial {trial}: {n}");
            var back = new byte[raw.Length];
            Assert.Equal(raw.Length, LZ4Codec.Decode(compressed.AsSpan(0, n), back));
            Assert.Equal(raw, back);
        }
    }

    [Fact]
    public void ATooSmallDestinationGivesZeroAndIsNeverOverrun()
    {
        var rnd = new Random(3);
        for (int trial = 0; trial < 300; trial++)
        {
            byte[] raw = Data(rnd.Next(1, 20_000), rnd.Next(CodecTestData.Shapes), trial);
            int full = Lz4BlockEncoder.Compress(raw, new byte[LZ4Codec.MaximumOutputSize(raw.Length)], 1);
            int capacity = rnd.Next(1, full + 1);
            var dst = new byte[capacity + 64];
            dst.AsSpan(capacity).Fill(0xA5);
            int n = Lz4BlockEncoder.Compress(raw, dst.AsSpan(0, capacity), 1);
            Assert.True(n == 0 || n == full, $"capacity {capacity}: {n} (full {full})");
            Assert.All(dst.AsSpan(capacity).ToArray(), b => Assert.Equal(0xA5, b));
            if (n > 0)
            {
                var back = new byte[raw.Length];
                Assert.Equal(raw.Length, LZ4Codec.Decode(dst.AsSpan(0, n), back));
                Assert.Equal(raw, back);
            }
        }
    }

    [Fact]
    public void CompressesAboutAsWellAsK4osAndAllocatesNothing()
    {
        byte[] raw = Data(4096, 1, 9);
        var ours = new byte[8192];
        var theirs = new byte[8192];
        int n = Lz4BlockEncoder.Compress(raw, ours, 1);
        int m = LZ4Codec.Encode(raw, theirs, LZ4Level.L00_FAST);
        Assert.True(n <= m * 1.05, $"ours {n}, K4os {m}");
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 100; i++)
        {
            Lz4BlockEncoder.Compress(raw, ours, 1);
        }
        Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
    }
}
