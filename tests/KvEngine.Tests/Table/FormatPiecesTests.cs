using System.Text;
using KvEngine.Format;
using KvEngine.Table;
using KvEngine.Util;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Table;

public class FormatPiecesTests
{
    private static string Separator(string start, string limit)
    {
        using var b = new ByteBuffer();
        KeyShortening.ShortestSeparator(Encoding.Latin1.GetBytes(start), Encoding.Latin1.GetBytes(limit), b);
        return Encoding.Latin1.GetString(b.WrittenSpan);
    }

    [Theory]
    [InlineData("abcdefg", "abzzz", "abd")]
    [InlineData("abc", "abcd", "abc")] // prefix: unchanged
    [InlineData("abcd", "abc", "abcd")] // start > limit: unchanged
    [InlineData("abc1xyz", "abc2", "abc1y")] // adjacent bytes at limit's end: bump a later byte
    [InlineData("abc1\u00ff\u00ffz", "abc2", "abc1\u00ff\u00ff{")]
    [InlineData("abc1\u00ff\u00ff", "abc2", "abc1\u00ff\u00ff")] // nothing to bump
    [InlineData("a", "c", "b")]
    public void ShortestSeparatorFollowsRocksDb(string start, string limit, string expected) =>
        Assert.Equal(expected, Separator(start, limit));

    [Theory]
    [InlineData("abc", "b")]
    [InlineData("\u00ff\u00ffa", "\u00ff\u00ffb")]
    [InlineData("\u00ff\u00ff", "\u00ff\u00ff")]
    public void ShortSuccessorFollowsRocksDb(string key, string expected)
    {
        using var b = new ByteBuffer();
        KeyShortening.ShortSuccessor(Encoding.Latin1.GetBytes(key), b);
        Assert.Equal(expected, Encoding.Latin1.GetString(b.WrittenSpan));
    }

    [Fact]
    public void InternalSeparatorGetsTheSeekTrailerOnlyWhenShortened()
    {
        using var b = new ByteBuffer();
        byte[] last = TableTestUtil.Key("abcdefg", 7);
        KeyShortening.InternalSeparator(last, TableTestUtil.Key("abzzz", 9), b);
        Assert.Equal(InternalKeys.Create("abd"u8, InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek), b.WrittenSpan.ToArray());
        Assert.True(InternalKeyComparer.Compare(last, b.WrittenSpan) < 0);

        b.Clear();
        KeyShortening.InternalSeparator(last, TableTestUtil.Key("abcdefg", 3), b);
        Assert.Equal(last, b.WrittenSpan.ToArray());
    }

    [Fact]
    public void FooterRoundTripsIn53Bytes()
    {
        var footer = new Footer(ChecksumType.Xxh3, new BlockHandle(29631, 83), new BlockHandle(28573, 167), 5);
        var bytes = new byte[TableFormat.FooterSize];
        footer.EncodeTo(bytes);
        Assert.Equal(53, bytes.Length);
        Assert.Equal(4, bytes[0]);
        Assert.Equal(0x88e241b785f4cff7UL, Coding.DecodeFixed64(bytes.AsSpan(45)));
        Assert.Equal(5u, Coding.DecodeFixed32(bytes.AsSpan(41)));
        Assert.Equal(footer, Footer.Decode(bytes, "f"));
        // The footer of a table RocksDB 7.8 wrote (db_bench, XXH3, format_version 5).
        byte[] rocks = Convert.FromHexString(
            "04BFE701539DDF01A701000000000000000000000000000000000000000000000000000000000000" +
            "0005000000F7CFF485B741E288");
        Assert.Equal(footer, Footer.Decode(rocks, "rocks"));
    }

    [Theory]
    [InlineData(0, 0x02CC5D05U, 0xEF46DB3751D8E999UL)]
    [InlineData(1, 0xCF65B03EU, 0xE934A84ADB052768UL)]
    [InlineData(14, 0x1208E7E2U, 0x8282DCC4994E35C8UL)]
    [InlineData(222, 0x5BD11DBDU, 0xB641AE8CB691C174UL)]
    public void LegacyXxHashMatchesPublishedVectorsForEverySplit(int length, uint xxh32, ulong xxh64)
    {
        var buffer = new byte[length];
        ulong gen = 2654435761UL;
        for (int i = 0; i < length; i++)
        {
            buffer[i] = (byte)(gen >> 56);
            gen *= 11400714785074694797UL;
        }
        for (int tail = 0; tail <= Math.Min(length, 16); tail++)
        {
            Assert.Equal(xxh32, LegacyXxHash.Hash32(buffer.AsSpan(0, length - tail), buffer.AsSpan(length - tail)));
            Assert.Equal(xxh64, LegacyXxHash.Hash64(buffer.AsSpan(0, length - tail), buffer.AsSpan(length - tail)));
        }
    }

    [Fact]
    public void XxhChecksumFoldsTheTypeByteIn()
    {
        byte[] block = Encoding.ASCII.GetBytes("some block contents");
        uint h = (uint)System.IO.Hashing.XxHash3.HashToUInt64(block);
        Assert.Equal(h, BlockChecksum.Compute(ChecksumType.Xxh3, block, 0));
        Assert.Equal(h ^ unchecked(7u * 0x6b9083d9u), BlockChecksum.Compute(ChecksumType.Xxh3, block, 7));
        byte[] withType = [.. block, 4];
        Assert.Equal(Crc32C.Mask(Crc32C.Compute(withType)), BlockChecksum.Compute(ChecksumType.Crc32C, block, 4));
    }
}
