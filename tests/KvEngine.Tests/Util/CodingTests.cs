using KvEngine.Util;

namespace KvEngine.Tests.Util;

public class CodingTests
{
    [Theory]
    [InlineData(0UL)]
    [InlineData(1UL)]
    [InlineData(127UL)]
    [InlineData(128UL)]
    [InlineData(300UL)]
    [InlineData(uint.MaxValue)]
    [InlineData(ulong.MaxValue)]
    public void Varint64RoundTrips(ulong value)
    {
        Span<byte> buf = stackalloc byte[Coding.MaxVarint64Length];
        int n = Coding.EncodeVarint64(buf, value);
        Assert.Equal(Coding.VarintLength(value), n);
        Assert.True(Coding.TryDecodeVarint64(buf[..n], out ulong back, out int consumed));
        Assert.Equal(value, back);
        Assert.Equal(n, consumed);
        Assert.False(Coding.TryDecodeVarint64(buf[..(n - 1)], out _, out _));
    }

    [Fact]
    public void Varint32RejectsOverflowAndTruncation()
    {
        Assert.False(Coding.TryDecodeVarint32(new byte[] { 0xFF, 0xFF, 0xFF, 0xFF, 0x1F }, out _, out _));
        Assert.False(Coding.TryDecodeVarint32(new byte[] { 0x80, 0x80 }, out _, out _));
        Assert.True(Coding.TryDecodeVarint32(new byte[] { 0xFF, 0xFF, 0xFF, 0xFF, 0x0F }, out uint v, out int c));
        Assert.Equal(uint.MaxValue, v);
        Assert.Equal(5, c);
    }

    [Fact]
    public void LengthPrefixedDetectsTruncation()
    {
        ReadOnlySpan<byte> ok = new byte[] { 3, 1, 2, 3, 9 };
        Assert.True(Coding.TryGetLengthPrefixed(ref ok, out ReadOnlySpan<byte> s));
        Assert.Equal(new byte[] { 1, 2, 3 }, s.ToArray());
        Assert.Equal(1, ok.Length);
        ReadOnlySpan<byte> bad = new byte[] { 4, 1, 2, 3 };
        Assert.False(Coding.TryGetLengthPrefixed(ref bad, out _));
    }

    [Fact]
    public void Crc32CMatchesKnownValueAndMaskRoundTrips()
    {
        // RFC 3720 test vector: 32 bytes of zeros -> 0x8A9136AA.
        Assert.Equal(0x8A9136AAu, Crc32C.Compute(new byte[32]));
        // "123456789" -> 0xE3069283 (the CRC-32C check value).
        Assert.Equal(0xE3069283u, Crc32C.Compute("123456789"u8));
        uint crc = Crc32C.Compute("hello"u8);
        Assert.NotEqual(crc, Crc32C.Mask(crc));
        Assert.Equal(crc, Crc32C.Unmask(Crc32C.Mask(crc)));
    }
}
