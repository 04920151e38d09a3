using KvEngine.Compression;

namespace KvEngine.Tests.Compression;

/// <summary>
/// Our allocation-free Snappy decoder reads what Snappier (and so libsnappy, whose format it
/// writes) produces, for every element kind, and rejects malformed input with -1.
/// </summary>
public class SnappyDecoderTests
{
    private static byte[] Compress(byte[] raw)
    {
        var output = new byte[Snappier.Snappy.GetMaxCompressedLength(raw.Length)];
        return output.AsSpan(0, Snappier.Snappy.Compress(raw, output)).ToArray();
    }

    public static TheoryData<int, int> Shapes => new()
    {
        { 0, 0 }, { 1, 0 }, { 59, 0 }, { 61, 0 }, { 300, 0 }, { 70_000, 0 },     // literals of every length form
        { 4096, 1 }, { 100_000, 1 }, { 4096, 2 }, { 1 << 20, 2 }, { 200_000, 3 }, // short, overlapping and far copies
    };

    private static byte[] Data(int length, int shape)
    {
        var rnd = new Random(length * 7 + shape);
        var data = new byte[length];
        switch (shape)
        {
            case 0:
                rnd.NextBytes(data);
                break;
            case 1: // db_bench-like half-compressible values
                for (int i = 0; i < length; i++)
                {
                    data[i] = i % 100 < 50 ? (byte)(' ' + rnd.Next(95)) : data[i - 50];
                }
                break;
            case 2: // runs: overlapping copies with offsets 1..8
                for (int i = 0; i < length; i++)
                {
                    data[i] = (byte)(i / 97 % 5 == 0 ? rnd.Next(256) : i >= 3 ? data[i - 1 - (i / 1000 % 8) % Math.Max(1, i)] : 7);
                }
                break;
            default: // a random 40 KiB chunk repeated: copies with 2- and 4-byte offsets
                var chunk = new byte[40_000];
                rnd.NextBytes(chunk);
                for (int i = 0; i < length; i++)
                {
                    data[i] = chunk[i % chunk.Length];
                }
                break;
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Shapes))]
    public void DecodesSnappierOutput(int length, int shape)
    {
        byte[] raw = Data(length, shape);
        byte[] compressed = Compress(raw);
        Assert.True(SnappyDecoder.TryGetUncompressedLength(compressed, out int declared, out _));
        Assert.Equal(length, declared);
        var output = new byte[length];
        Assert.Equal(length, SnappyDecoder.Decompress(compressed, output));
        Assert.Equal(raw, output);
    }

    [Fact]
    public void MalformedInputIsRejectedAndAgreesWithSnappierOnWhatIsValid()
    {
        byte[] raw = Data(8192, 1);
        byte[] good = Compress(raw);
        var rnd = new Random(11);
        int rejected = 0;
        for (int trial = 0; trial < 20_000; trial++)
        {
            byte[] bad = (byte[])good.Clone();
            for (int flips = rnd.Next(1, 4); flips > 0; flips--)
            {
                bad[rnd.Next(bad.Length)] = (byte)rnd.Next(256);
            }
            if (rnd.Next(4) == 0)
            {
                bad = bad.AsSpan(0, rnd.Next(bad.Length)).ToArray();
            }
            int declared = SnappyDecoder.TryGetUncompressedLength(bad, out int d, out _) && d <= 1 << 16 ? d : 8192;
            var ours = new byte[declared];
            int n = SnappyDecoder.Decompress(bad, ours);
            if (n < 0)
            {
                rejected++;
                continue;
            }
            // What we accept, Snappier decodes to the same bytes.
            var theirs = new byte[declared];
            Assert.True(Snappier.Snappy.TryDecompress(bad, theirs, out int m));
            Assert.Equal(n, m);
            Assert.Equal(theirs, ours);
        }
        Assert.True(rejected > 1000, $"{rejected}");
    }

    [Theory]
    [InlineData(new byte[] { })]                                  // no preamble
    [InlineData(new byte[] { 0x80, 0x80, 0x80, 0x80, 0x80 })]     // preamble longer than 5 bytes
    [InlineData(new byte[] { 0xFF, 0xFF, 0xFF, 0xFF, 0x1F })]     // preamble above 32 bits
    [InlineData(new byte[] { 4, 0x0C, (byte)'a' })]               // literal longer than the input
    [InlineData(new byte[] { 4, 0x01, 0x01 })]                    // copy before any output
    [InlineData(new byte[] { 4, 0x00, (byte)'a', 0x02, 0x00, 0x00 })] // offset 0
    [InlineData(new byte[] { 2, 0x04, (byte)'a', (byte)'b', (byte)'c' })] // more output than declared
    [InlineData(new byte[] { 3, 0x04, (byte)'a', (byte)'b' })]    // truncated literal
    public void RejectsMalformedElements(byte[] input)
    {
        Assert.Equal(-1, SnappyDecoder.Decompress(input, new byte[input.Length > 0 && input[0] < 0x80 ? input[0] : 0]));
    }

    [Fact]
    public void DecodingAllocatesNothing()
    {
        byte[] raw = Data(4096, 1);
        byte[] compressed = Compress(raw);
        var output = new byte[raw.Length];
        SnappyDecoder.Decompress(compressed, output);
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 100; i++)
        {
            SnappyDecoder.Decompress(compressed, output);
        }
        Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
    }
}
