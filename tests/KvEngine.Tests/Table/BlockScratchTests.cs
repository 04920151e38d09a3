using KvEngine.Table;

namespace KvEngine.Tests.Table;

/// <summary>Scratch memory for blocks read from a file: pooled arrays when small, native memory when large; the span is always exactly the length asked for (or shrunk to).</summary>
public class BlockScratchTests
{
    [Theory]
    [InlineData(0)]
    [InlineData(100)]
    [InlineData(BlockScratch.ArrayLimit)]
    [InlineData(BlockScratch.ArrayLimit + 1)]
    [InlineData(1_500_000)]
    public void SpanHasTheRequestedLengthAndShrinks(int length)
    {
        BlockScratch s = BlockScratch.Rent(length);
        try
        {
            Assert.Equal(length, s.Span.Length);
            s.Span.Fill(0x5A);
            s.Shrink(length / 2);
            Assert.Equal(length / 2, s.Span.Length);
            Assert.True(s.Span.IndexOfAnyExcept((byte)0x5A) < 0);
            Assert.Throws<ArgumentOutOfRangeException>(() => s.Shrink(length + 1));
        }
        finally
        {
            s.Dispose();
        }
    }
}
