using KvEngine.Util;

namespace KvEngine.Tests.Util;

public class XxHash3Tests
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
        Assert.Equal(expected, XxHash3.Hash64(buffer.AsSpan(0, length)));
    }

    [Fact]
    public void EveryLengthUpTo2500IsDeterministicAndSensitiveToTheLastByte()
    {
        byte[] buffer = SanityBuffer(2500);
        for (int len = 1; len <= buffer.Length; len += 7)
        {
            ulong h = XxHash3.Hash64(buffer.AsSpan(0, len));
            byte[] copy = buffer.AsSpan(0, len).ToArray();
            Assert.Equal(h, XxHash3.Hash64(copy));
            copy[len - 1] ^= 1;
            Assert.NotEqual(h, XxHash3.Hash64(copy));
        }
    }
}

public class XxHash3VectorPathTests
{
    [Fact]
    public void VectorPathMatchesScalarReferenceForEveryLongLength()
    {
        var rng = new Random(42);
        var data = new byte[9000];
        rng.NextBytes(data);
        // Every length crossing stripe (64), block (1024) and scramble boundaries, plus random ones.
        for (int len = 241; len <= 3200; len++)
        {
            ReadOnlySpan<byte> s = data.AsSpan(len % 7, len);
            Assert.Equal(XxHash3.HashLongScalar(s), XxHash3.Hash64(s));
        }
        for (int i = 0; i < 200; i++)
        {
            int len = rng.Next(241, 8990);
            ReadOnlySpan<byte> s = data.AsSpan(rng.Next(0, data.Length - len), len);
            Assert.Equal(XxHash3.HashLongScalar(s), XxHash3.Hash64(s));
        }
    }
}
