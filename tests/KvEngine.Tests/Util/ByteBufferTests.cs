using KvEngine.Util;

namespace KvEngine.Tests.Util;

public class ByteBufferTests
{
    private static byte Pattern(int i) => (byte)(i * 31 + (i >> 8));

    [Fact]
    public void SpillingBufferMovesToNativeMemoryKeepsItsBytesAndFreesOnRelease()
    {
        using var buffer = new ByteBuffer(4096, spillToNative: true);
        const int n = 1 << 20; // past the 64 KiB pooled limit, several doublings
        for (int i = 0; i < n; i++)
        {
            if (i % 3 == 0)
            {
                buffer.AppendByte(Pattern(i));
            }
            else
            {
                buffer.Append([Pattern(i)]);
            }
        }
        Assert.True(buffer.IsNative);
        Assert.Equal(n, buffer.Length);
        ReadOnlySpan<byte> written = buffer.WrittenSpan;
        for (int i = 0; i < n; i++)
        {
            Assert.Equal(Pattern(i), written[i]);
        }
        Assert.True(buffer.WrittenMemory.Span.SequenceEqual(written));

        // IBufferWriter over native storage: GetSpan / GetMemory / Advance.
        buffer.GetMemory(8).Span[..4].Fill(7);
        buffer.Advance(4);
        buffer.AppendFixed32(0x01020304);
        buffer.AppendVarint64(ulong.MaxValue);
        Assert.Equal(n + 4 + 4 + 10, buffer.Length);
        Assert.Equal(7, buffer.WrittenSpan[n + 3]);
        Assert.Equal(0x04, buffer.WrittenSpan[n + 4]);

        buffer.ReleaseLarge();
        Assert.False(buffer.IsNative);
        Assert.Equal(0, buffer.Length);
        Assert.True(buffer.Capacity <= BoundedArrayPool<byte>.PooledLimitBytes);
        buffer.Append("after"u8);
        Assert.True(buffer.WrittenSpan.SequenceEqual("after"u8));
    }

    [Fact]
    public void PlainBufferStaysManagedWhenLarge()
    {
        using var buffer = new ByteBuffer(16);
        buffer.Append(new byte[200_000]);
        Assert.False(buffer.IsNative);
        Assert.Equal(200_000, buffer.Length);
        Assert.Throws<ArgumentOutOfRangeException>(() => buffer.Advance(buffer.Capacity));
    }
}
