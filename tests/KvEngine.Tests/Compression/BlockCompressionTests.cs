using KvEngine.Compression;
using KvEngine.Util;

namespace KvEngine.Tests.Compression;

public class BlockCompressionTests
{
    private const string Source = "test.sst";

    public static TheoryData<byte> Codecs => new() { (byte)CompressionType.Lz4, (byte)CompressionType.Lz4HC, (byte)CompressionType.Zstd };

    private static byte[] Compressible(int length)
    {
        var data = new byte[length];
        for (int i = 0; i < length; i++)
        {
            data[i] = (byte)("abcdefgh"[i % 8] + (i / 512 % 3));
        }
        return data;
    }

    private static byte[] RoundTrip(CompressionType type, byte[] compressed, int max = 1 << 20)
    {
        int size = BlockCompression.ReadUncompressedLength(type, compressed, max, Source, 0, out int header);
        var output = new byte[size];
        BlockCompression.Decompress(type, compressed.AsSpan(header), output, Source, 0);
        return output;
    }

    [Theory]
    [MemberData(nameof(Codecs))]
    public void CompressibleDataRoundTripsWithSizePrefix(byte codec)
    {
        var type = (CompressionType)codec;
        byte[] raw = Compressible(10_000);
        using var buffer = new ByteBuffer();
        buffer.Append([0xEE]);
        Assert.True(BlockCompression.TryCompress(type, BlockCompression.DefaultLevel, raw, buffer));
        byte[] compressed = buffer.WrittenSpan[1..].ToArray();
        Assert.Equal(0xEE, buffer.WrittenSpan[0]);
        Assert.True(Coding.TryDecodeVarint32(compressed, out uint declared, out _));
        Assert.Equal((uint)raw.Length, declared);
        Assert.True(compressed.Length < raw.Length - (raw.Length / 8));
        Assert.Equal(raw, RoundTrip(type, compressed));
    }

    [Theory]
    [MemberData(nameof(Codecs))]
    public void IncompressibleDataIsDeclined(byte codec)
    {
        var type = (CompressionType)codec;
        var raw = new byte[4096];
        new Random(7).NextBytes(raw);
        using var buffer = new ByteBuffer();
        Assert.False(BlockCompression.TryCompress(type, BlockCompression.DefaultLevel, raw, buffer));
        Assert.Equal(0, buffer.Length);
    }

    [Fact]
    public void SavingLessThanAnEighthIsDeclined()
    {
        // 15/16 random, 1/16 zeros: LZ4 saves about 1/16, less than the 1/8 RocksDB requires.
        var raw = new byte[8192];
        new Random(3).NextBytes(raw.AsSpan(0, 7680));
        using var buffer = new ByteBuffer();
        bool compressed = BlockCompression.TryCompress(CompressionType.Lz4, BlockCompression.DefaultLevel, raw, buffer);
        Assert.False(compressed);
    }

    [Theory]
    [MemberData(nameof(Codecs))]
    public void CorruptPayloadRaisesCorruption(byte codec)
    {
        var type = (CompressionType)codec;
        byte[] raw = Compressible(10_000);
        using var buffer = new ByteBuffer();
        Assert.True(BlockCompression.TryCompress(type, BlockCompression.DefaultLevel, raw, buffer));
        byte[] good = buffer.WrittenSpan.ToArray();
        int failures = 0;
        for (int i = 2; i < good.Length; i += Math.Max(1, good.Length / 40))
        {
            byte[] bad = (byte[])good.Clone();
            bad[i] ^= 0x5A;
            try
            {
                byte[] result = RoundTrip(type, bad);
                // A flip inside a literal can decode to different bytes of the right length; the
                // block checksum is what catches that. Anything else must be reported.
                Assert.Equal(raw.Length, result.Length);
            }
            catch (KvCorruptionException)
            {
                failures++;
            }
        }
        Assert.True(failures > 0);
    }

    [Theory]
    [MemberData(nameof(Codecs))]
    public void WrongDeclaredSizeRaisesCorruption(byte codec)
    {
        var type = (CompressionType)codec;
        byte[] raw = Compressible(5000);
        using var buffer = new ByteBuffer();
        Assert.True(BlockCompression.TryCompress(type, BlockCompression.DefaultLevel, raw, buffer));
        byte[] good = buffer.WrittenSpan.ToArray();
        Coding.TryDecodeVarint32(good, out _, out int header);
        foreach (int declared in new[] { 4999, 5001, 100 })
        {
            using var bad = new ByteBuffer();
            bad.AppendVarint32((uint)declared);
            bad.Append(good.AsSpan(header));
            Assert.Throws<KvCorruptionException>(() => RoundTrip(type, bad.WrittenSpan.ToArray()));
        }
    }

    [Fact]
    public void AbsurdDeclaredSizeRaisesCorruption()
    {
        using var bad = new ByteBuffer();
        bad.AppendVarint32(uint.MaxValue);
        bad.Append([1, 2, 3]);
        Assert.Throws<KvCorruptionException>(() =>
            BlockCompression.ReadUncompressedLength(CompressionType.Zstd, bad.WrittenSpan, 256 << 20, Source, 0, out _));
        Assert.Throws<KvCorruptionException>(() =>
            BlockCompression.ReadUncompressedLength(CompressionType.Lz4, [0xFF, 0xFF], 256 << 20, Source, 0, out _));
    }

    [Fact]
    public void SnappyRoundTripsWithoutSizePrefixAndZlibIsReadOnly()
    {
        var raw = new byte[8000];
        for (int i = 0; i < raw.Length; i++)
        {
            raw[i] = (byte)(i % 37);
        }
        using var packed = new ByteBuffer();
        Assert.True(BlockCompression.TryCompress(CompressionType.Snappy, BlockCompression.DefaultLevel, raw, packed));
        int length = BlockCompression.ReadUncompressedLength(CompressionType.Snappy, packed.WrittenSpan, 1 << 20, Source, 0, out int header);
        Assert.Equal(raw.Length, length);
        Assert.Equal(0, header); // Snappy's own varint header is part of the codec output
        var back = new byte[length];
        BlockCompression.Decompress(CompressionType.Snappy, packed.WrittenSpan[header..], back, Source, 0);
        Assert.Equal(raw, back);
        byte[] damaged = packed.WrittenSpan.ToArray();
        damaged[^3] ^= 0xFF;
        damaged[3] ^= 0x55;
        Assert.ThrowsAny<KvCorruptionException>(() => BlockCompression.Decompress(CompressionType.Snappy, damaged, new byte[length], Source, 0));
        Assert.Throws<KvNotSupportedException>(() => BlockCompression.EnsureWritable(CompressionType.Zlib));
        Assert.ThrowsAny<KvCorruptionException>(() =>
            BlockCompression.Decompress(CompressionType.Zlib, [0xFF, 0xFF, 0xFF], new byte[10], Source, 0));
    }

    [Theory]
    [InlineData(3, "BZip2")]
    [InlineData(6, "Xpress")]
    public void UnsupportedCodecsAreNamed(byte codec, string name)
    {
        var type = (CompressionType)codec;
        var ex = Assert.Throws<KvCorruptionException>(() =>
            BlockCompression.ReadUncompressedLength(type, [5, 1, 2, 3, 4, 5], 1 << 20, Source, 0, out _));
        Assert.Contains(name, ex.Message);
        Assert.Throws<KvNotSupportedException>(() => BlockCompression.EnsureWritable(type));
    }

    [Fact]
    public void UnknownCodecByteIsCorruption()
    {
        Assert.Throws<KvCorruptionException>(() =>
            BlockCompression.ReadUncompressedLength((CompressionType)0x42, [5, 1], 1 << 20, Source, 0, out _));
    }

    [Fact]
    public void RocksDbNamesMatchCompressionTypeToString()
    {
        Assert.Equal("NoCompression", CompressionTypeNames.ToRocksDbName(CompressionType.None));
        Assert.Equal("LZ4", CompressionTypeNames.ToRocksDbName(CompressionType.Lz4));
        Assert.Equal("ZSTD", CompressionTypeNames.ToRocksDbName(CompressionType.Zstd));
        Assert.Equal(7, (int)CompressionType.Zstd);
        Assert.Equal(4, (int)CompressionType.Lz4);
    }
}
