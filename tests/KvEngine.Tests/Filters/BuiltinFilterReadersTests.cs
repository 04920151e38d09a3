using System.Text;
using KvEngine.Filters;

namespace KvEngine.Tests.Filters;

// Ported from RocksDB util/bloom_test.cc FullBloomTest.CorruptFilters: valid trailers read the bits
// (a filter of all ones matches, of all zeros does not); unknown, reserved or malformed trailers
// give "always may match"; a filter of at most 5 bytes never matches.
public class BuiltinFilterReadersTests
{
    private static readonly byte[] s_hello = Encoding.ASCII.GetBytes("hello");
    private static readonly byte[] s_world = Encoding.ASCII.GetBytes("world");

    public static TheoryData<int, uint, byte> ReadsBits => new()
    {
        { 64, 1, 6 }, // legacy, one 64-byte line
        { 64 * 3, 3, 6 },
        { 256 * 3, 3, 6 }, // 256-byte lines: unusual but legal
        { 64, 1, 30 },
        { 64, 1, 1 },
        { 64, 1, 31 }, // dubious legacy probe counts still read
        { 64, 1, 127 },
        { 64, 6U << 8, 0xFF }, // FastLocalBloom, six probes
        { 64, 30U << 8, 0xFF }, // FastLocalBloom, max 30 probes
        { 64 * 5, 6U << 8, 0xFF },
    };

    public static TheoryData<int, uint, byte> AlwaysMatches => new()
    {
        { 64, 1, 0 }, // zero probes
        { 64, 0, 6 }, // legacy: no solution to 0 * x == 64
        { 4, 3, 6 }, // legacy: 3 * x == 4
        { 97 * 3, 3, 6 }, // legacy: 97-byte lines are not a power of two
        { 65 * 3, 3, 6 },
        { 64, 1, 128 }, // negative markers are reserved
        { 64, 1, 253 },
        { 64, (6U << 8) | 1U, 0xFF }, // FastLocalBloom with another sub-implementation
        { 64, (6U << 8) | (1U << 16), 0xFF }, // reserved bytes set
        { 64, (6U << 8) | (1U << 24), 0xFF },
        { 64, 31U << 8, 0xFF }, // more than 30 probes
        { 64, 33U << 8, 0xFF }, // 128-byte blocks (top 3 bits 1), not supported
        { 64, 66U << 8, 0xFF },
        { 64, 130U << 8, 0xFF },
        { 64, 0U << 8, 0xFF }, // zero probes
        { 63, 6U << 8, 0xFF }, // no whole line: RocksDB would read past the bits
        { 1, 6U << 8, 0xFF },
        { 128, (2U << 8) + 123U, 0xFE }, // Ribbon: not read by us
        { 256, (2U << 8) + 123U, 0xFE },
    };

    [Theory]
    [MemberData(nameof(ReadsBits))]
    public void ValidTrailersReadTheBits(int len, uint word, byte first)
    {
        foreach (bool ones in new[] { false, true })
        {
            IFilterBitsReader reader = BuiltinFilterReaders.Create(RawFilter.Fill(len, word, first, ones));
            Assert.Equal(ones, reader.MayMatch(s_hello));
            Assert.Equal(ones, reader.MayMatch(s_world));
        }
    }

    [Theory]
    [MemberData(nameof(AlwaysMatches))]
    public void UnknownOrMalformedTrailersAlwaysMatch(int len, uint word, byte first)
    {
        foreach (bool ones in new[] { false, true })
        {
            IFilterBitsReader reader = BuiltinFilterReaders.Create(RawFilter.Fill(len, word, first, ones));
            Assert.Same(AlwaysTrueFilterReader.Instance, reader);
            Assert.True(reader.MayMatch(s_hello));
            Assert.True(reader.MayMatch(s_world));
        }
    }

    [Theory]
    [InlineData(0, 0U, 6)]
    [InlineData(0, 37U, 6)]
    [InlineData(0, 0U, 0)] // zero size trumps zero probes
    [InlineData(-1, 3U, 6)] // shorter than the trailer
    [InlineData(-5, 3U, 6)]
    public void FiltersOfAtMostFiveBytesNeverMatch(int len, uint word, byte first)
    {
        foreach (bool ones in new[] { false, true })
        {
            IFilterBitsReader reader = BuiltinFilterReaders.Create(RawFilter.Fill(len, word, first, ones));
            Assert.False(reader.MayMatch(s_hello));
            Assert.False(reader.MayMatch(s_world));
        }
    }

    [Fact]
    public void EmptyBuilderMakesTheTrailerAloneWhichNeverMatches()
    {
        byte[] filter = FilterTestKeys.Build(10, 0, 0);
        Assert.Equal(new byte[] { 0xFF, 0x00, 6, 0, 0 }, filter);
        IFilterBitsReader reader = new FastLocalBloomPolicy().CreateReader(filter);
        Assert.False(reader.MayMatch(s_hello));
        Assert.False(reader.MayMatch(s_world));
        Assert.False(new FastLocalBloomPolicy().CreateReader(ReadOnlyMemory<byte>.Empty).MayMatch(s_hello));
    }

    [Fact]
    public void EveryTruncationOrSingleByteCorruptionOfARealFilterIsSafe()
    {
        byte[] filter = FilterTestKeys.Build(10, 0, 200);
        for (int cut = 0; cut <= filter.Length; cut++)
        {
            // Must not throw, whatever it answers.
            BuiltinFilterReaders.Create(filter.AsMemory(0, cut)).MayMatch(s_hello);
        }
        for (int i = filter.Length - 5; i < filter.Length; i++)
        {
            for (int v = 0; v < 256; v++)
            {
                byte[] copy = (byte[])filter.Clone();
                copy[i] = (byte)v;
                BuiltinFilterReaders.Create(copy).MayMatch(s_world);
            }
        }
    }
}
