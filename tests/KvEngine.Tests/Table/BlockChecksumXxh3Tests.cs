using KvEngine.Table;

namespace KvEngine.Tests.Table;

/// <summary>
/// The kXXH3 block checksum (System.IO.Hashing's XxHash3 under <see cref="BlockChecksum"/>)
/// against xxHash's published XXH3_64bits vectors, one length per code path.
/// </summary>
public class BlockChecksumXxh3Tests
{
    private const ulong Prime32 = 2654435761UL;
    private const ulong Prime64 = 11400714785074694797UL;

    /// <summary>xxHash's sanity buffer (cli/xsum_sanity_check.c, XSUM_fillTestBuffer).</summary>
    private static byte[] SanityBuffer(int length)
    {
        var buffer = new byte[length];
        ulong gen = Prime32;
        for (int i = 0; i < length; i++)
        {
            buffer[i] = (byte)(gen >> 56);
            gen *= Prime64;
        }
        return buffer;
    }

    // XSUM_XXH3_testdata, seed 0: one length per code path of XXH3_64bits.
    [Theory]
    [InlineData(0, 0x2D06800538D394C2UL)]
    [InlineData(1, 0xC44BDFF4074EECDBUL)]
    [InlineData(6, 0x27B56A84CD2D7325UL)]
    [InlineData(12, 0xA713DAF0DFBB77E7UL)]
    [InlineData(24, 0xA3FE70BF9D3510EBUL)]
    [InlineData(48, 0x397DA259ECBA1F11UL)]
    [InlineData(80, 0xBCDEFBBB2C47C90AUL)]
    [InlineData(195, 0xCD94217EE362EC3AUL)]
    [InlineData(403, 0xCDEB804D65C6DEA4UL)]
    [InlineData(512, 0x617E49599013CB6BUL)]
    [InlineData(2048, 0xDD59E2C3A5F038E0UL)]
    [InlineData(2240, 0x6E73A90539CF2948UL)]
    [InlineData(2367, 0xCB37AEB9E5D361EDUL)]
    public void MatchesPublishedSanityVectors(int length, ulong expected)
    {
        byte[] buffer = SanityBuffer(2367);
        // Type byte 0 leaves the low 32 bits of XXH3_64 unchanged.
        Assert.Equal((uint)expected, BlockChecksum.Compute(ChecksumType.Xxh3, buffer.AsSpan(0, length), 0));
    }

    [Fact]
    public void EveryLengthUpTo2500IsDeterministicAndSensitiveToTheLastByte()
    {
        byte[] buffer = SanityBuffer(2500);
        for (int len = 1; len <= buffer.Length; len += 7)
        {
            uint h = BlockChecksum.Compute(ChecksumType.Xxh3, buffer.AsSpan(0, len), 0);
            byte[] copy = buffer.AsSpan(0, len).ToArray();
            Assert.Equal(h, BlockChecksum.Compute(ChecksumType.Xxh3, copy, 0));
            copy[len - 1] ^= 1;
            Assert.NotEqual(h, BlockChecksum.Compute(ChecksumType.Xxh3, copy, 0));
        }
    }
}
