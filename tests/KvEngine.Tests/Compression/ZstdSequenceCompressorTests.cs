using KvEngine.Compression;
using ZstdSharp;
using ZstdSharp.Unsafe;

namespace KvEngine.Tests.Compression;

/// <summary>
/// The default-level Zstandard path (our match finder, ZstdSharp's sequence encoder) writes
/// standard frames: the sequences it finds replay to the input by themselves, ZstdSharp's decoder
/// (libzstd reads them in the RocksDB interop tests) restores every size and shape, the frame
/// declares its content size, the output is about as small as ZstdSharp's own level 3, a
/// destination too small gives 0 and is never overrun, and a block allocates nothing.
/// </summary>
public unsafe class ZstdSequenceCompressorTests
{
    private static byte[] Data(int length, int shape, int seed) => CodecTestData.Data(length, shape, seed);

    public static IEnumerable<object[]> Cases()
    {
        int[] sizes = [0, 1, 5, 11, 12, 13, 20, 64, 255, 4096, 16_384, 65_536, 131_072, 131_075, 300_000];
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
    public void SequencesReplayToTheInputAndTheFrameDecodes(int size, int shape)
    {
        byte[] raw = Data(size, shape, size * 31 + shape);

        var sequences = new ZSTD_Sequence[ZstdMatchFinder.MaxSequences(size)];
        int count;
        fixed (byte* src = raw)
        fixed (ZSTD_Sequence* s = sequences)
        {
            count = ZstdMatchFinder.FindSequences(src, size, s);
        }
        Assert.Equal(raw, Replay(raw, sequences.AsSpan(0, count)));

        var compressed = new byte[ZstdCodec.CompressBound(size)];
        int n = new ZstdSequenceCompressor().Compress(raw, compressed);
        Assert.True(n > 0, $"size {size} shape {shape}: {n}");
        Assert.Equal((ulong)size, ZstdCodec.GetFrameContentSize(compressed.AsSpan(0, n)));
        using var decompressor = new Decompressor();
        Assert.Equal(raw, decompressor.Unwrap(compressed.AsSpan(0, n)).ToArray());
        if (shape == 2 && size > 1000)
        {
            Assert.True(n < size / 50, $"{n} bytes for {size} equal bytes");
        }
    }

    /// <summary>Random structures (runs, repeats at repeated distances, block ends): the sequences replay and the frames decode.</summary>
    [Fact]
    public void RandomStructuresReplayAndDecode()
    {
        var rnd = new Random(20261127);
        var compressor = new ZstdSequenceCompressor();
        using var decompressor = new Decompressor();
        var sequences = new ZSTD_Sequence[ZstdMatchFinder.MaxSequences(40_000)];
        for (int trial = 0; trial < 400; trial++)
        {
            byte[] raw = CodecTestData.Segments(rnd, rnd.Next(0, 40_000));
            int count;
            fixed (byte* src = raw)
            fixed (ZSTD_Sequence* s = sequences)
            {
                count = ZstdMatchFinder.FindSequences(src, raw.Length, s);
            }
            Assert.Equal(raw, Replay(raw, sequences.AsSpan(0, count)));
            var compressed = new byte[ZstdCodec.CompressBound(raw.Length)];
            int n = compressor.Compress(raw, compressed);
            Assert.True(n > 0, $"trial {trial}: {n}");
            Assert.Equal(raw, decompressor.Unwrap(compressed.AsSpan(0, n)).ToArray());
        }
    }

    /// <summary>Rebuilds a block from its sequences alone, checking each against the rules the encoder relies on.</summary>
    private static byte[] Replay(byte[] raw, ReadOnlySpan<ZSTD_Sequence> sequences)
    {
        var output = new List<byte>(raw.Length);
        int read = 0;
        foreach (ZSTD_Sequence s in sequences)
        {
            Assert.True(s.matchLength >= 4, $"match of {s.matchLength}");
            Assert.True(s.offset >= 1, "offset 0");
            output.AddRange(raw.AsSpan(read, (int)s.litLength).ToArray());
            read += (int)s.litLength;
            Assert.True(s.offset <= output.Count, $"offset {s.offset} before the block at {output.Count}");
            for (int i = 0; i < s.matchLength; i++)
            {
                output.Add(output[output.Count - (int)s.offset]);
            }
            read += (int)s.matchLength;
            Assert.True(read <= raw.Length, $"sequences run {read - raw.Length} bytes past the block");
        }
        output.AddRange(raw.AsSpan(read).ToArray()); // the last literals
        return output.ToArray();
    }

    [Fact]
    public void CompressesAboutAsWellAsZstdSharpAtLevel3AndAllocatesNothing()
    {
        var ours = new byte[16_384];
        var theirs = new byte[16_384];
        using var reference = new Compressor(3);
        var compressor = new ZstdSequenceCompressor();
        foreach (int shape in new[] { 1, 4, 5 }) // half-compressible, text, alternating periods
        {
            byte[] raw = Data(4096, shape, 9);
            int n = compressor.Compress(raw, ours);
            int m = reference.Wrap(raw, theirs);
            Assert.True(n <= m * 1.03, $"shape {shape}: ours {n}, ZstdSharp {m}");
        }
        byte[] block = Data(4096, 1, 10);
        compressor.Compress(block, ours);
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 100; i++)
        {
            compressor.Compress(block, ours);
        }
        Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
    }

    [Fact]
    public void ATooSmallDestinationGivesZeroAndIsNeverOverrun()
    {
        var rnd = new Random(3);
        var compressor = new ZstdSequenceCompressor();
        using var decompressor = new Decompressor();
        for (int trial = 0; trial < 300; trial++)
        {
            byte[] raw = Data(rnd.Next(1, 20_000), rnd.Next(CodecTestData.Shapes), trial);
            int full = compressor.Compress(raw, new byte[ZstdCodec.CompressBound(raw.Length)]);
            int capacity = rnd.Next(1, full + 1);
            var dst = new byte[capacity + 64];
            dst.AsSpan(capacity).Fill(0xA5);
            int n = compressor.Compress(raw, dst.AsSpan(0, capacity));
            Assert.True(n == 0 || n == full, $"capacity {capacity}: {n} (full {full})");
            Assert.All(dst.AsSpan(capacity).ToArray(), b => Assert.Equal(0xA5, b));
            if (n > 0)
            {
                Assert.Equal(raw, decompressor.Unwrap(dst.AsSpan(0, n)).ToArray());
            }
        }
    }

    [Fact]
    public void ADisposedCompressorThrows()
    {
        var compressor = new ZstdSequenceCompressor();
        compressor.Dispose();
        compressor.Dispose();
        Assert.Throws<ObjectDisposedException>(() => compressor.Compress(new byte[100], new byte[200]));
    }
}
