using KvEngine.Filters;
using KvEngine.Util;
using static KvEngine.Tests.Filters.FilterTestKeys;

namespace KvEngine.Tests.Filters;

// Golden values from RocksDB util/bloom_test.cc FullBloomTest.Schema (kFastLocalBloom): the whole
// filter's BloomHash, its probe count, and the first false positives, so our filters are
// byte-identical to RocksDB's and read the same way.
public class FastLocalBloomSchemaTests
{
    [Theory]
    [InlineData(5.0, 0, 87, 3, 4130687756U, "31,38,40,43,61,83,86,112,125,131", 10)]
    [InlineData(2.0, 0, 2087, 1, 3817481309U, "11,13,17,25,29,30,35,37,45,53", 10)]
    [InlineData(3.0, 0, 2087, 2, 2807269961U, "4,15,17,24,27,28,29,53,63,70", 10)]
    [InlineData(5.0, 0, 2087, 3, 204628445U, "15,24,29,39,53,87,89,100,103,104", 10)]
    [InlineData(8.0, 0, 2087, 5, 355564975U, "16,60,66,126,220,238,244,256,265,287", 10)]
    [InlineData(9.0, 0, 2087, 6, 2137566013U, "156,367,791,872,945,1015,1139,1159,1265", 9)]
    [InlineData(11.0, 0, 2087, 7, 2561502687U, "34,74,130,236,643,882,962,1015,1035,1110", 10)]
    [InlineData(14.0, 0, 2087, 8, 3709876890U, "130,240,522,565,989,2002,2526,3147,3543", 9)]
    [InlineData(16.0, 0, 2087, 9, 1087138490U, "3299,3611,3916,6620,7822,8079,8482,8942", 8)]
    [InlineData(10.0, 0, 2087, 6, 2498541272U, "16,126,133,422,466,472,813,1002,1035", 9)]
    [InlineData(10.0, 1, 2087, 6, 2058382345U, "16,126,133,422,466,472,813,1002,1035", 9)]
    [InlineData(10.0, 1, 2088, 6, 23699164U, "16,126,133,422,466,472,813,1002,1035", 9)]
    [InlineData(9.5, 1, 2088, 6, 3166884174U, "126,156,367,444,458,791,813,976,1015", 9)]
    [InlineData(10.499, 1, 2088, 7, 4098502778U, "16,236,240,472,1015,1045,1111,1409,1465", 9)]
    public void SchemaMatchesRocksDb(double bitsPerKey, int from, int to, int probes, uint filterHash, string firstFps, int fpCount)
    {
        byte[] filter = Build(bitsPerKey, from, to);
        Assert.Equal(probes, NumProbesFromFilterData(filter));
        Assert.Equal(filterHash, LegacyBloomHash.BloomHash(filter));
        IFilterBitsReader reader = new FastLocalBloomPolicy(bitsPerKey).CreateReader(filter);
        Assert.IsType<FastLocalBloomBitsReader>(reader);
        Assert.Equal(firstFps, FirstFps(reader, fpCount));
        for (int i = from; i < to; i++)
        {
            Assert.True(reader.MayMatch(Key(i)));
        }
    }

    [Fact]
    public void FilterBytesFollowTheSizeRuleAndTrailer()
    {
        byte[] filter = Build(10, 0, 2087);
        // ceil(2087 * 10000 / 8000) = 2609 -> 41 lines = 2624 bytes, plus the trailer.
        Assert.Equal(2624 + 5, filter.Length);
        Assert.Equal(new byte[] { 0xFF, 0x00, 6, 0, 0 }, filter[^5..]);
    }

    [Fact]
    public void LongKeysGiveTheFilterRocksDb78Wrote()
    {
        // Oracle: these 310 keys (241..10240 bytes, so XXPH3's multi-block long path with
        // scrambling, exact multiples of 64 and 1024 included) were written with RocksDB 7.8.3's
        // `ldb --bloom_bits=10 batchput` then `ldb compact`; the SST's
        // fullfilter.rocksdb.BuiltinBloomFilter block was 453 bytes with this BloomHash.
        int[] explicitLengths = [1024, 2048, 3072, 4096, 1088, 1025, 1023, 1280, 5120, 10240];
        var policy = new FastLocalBloomPolicy(10);
        using FastLocalBloomBitsBuilder builder = policy.CreateBuilder();
        var keys = new List<byte[]>();
        for (int i = 0; i < 310; i++)
        {
            int length = i < explicitLengths.Length ? explicitLengths[i] : 241 + (i * 173 % 5000);
            byte[] key = new byte[length];
            for (int j = 0; j < length; j++)
            {
                key[j] = (byte)((i * 131) + (j * 29) + (j >> 6));
            }
            keys.Add(key);
        }
        keys.Sort((a, b) => a.AsSpan().SequenceCompareTo(b));
        foreach (byte[] key in keys)
        {
            builder.AddKey(key);
        }
        using var output = new ByteBuffer();
        builder.Finish(output);
        Assert.Equal(453, output.Length);
        Assert.Equal(48100484U, LegacyBloomHash.BloomHash(output.WrittenSpan));
        IFilterBitsReader reader = policy.CreateReader(output.WrittenMemory);
        foreach (byte[] key in keys)
        {
            Assert.True(reader.MayMatch(key));
        }
    }

    [Fact]
    public void RawSchemaFastLocalBloomReadsLikeRocksDb()
    {
        // Two probes over four 64-byte lines of a fixed pattern: about 50% "FP" rate.
        var reader = new FastLocalBloomPolicy().CreateReader(RawFilter.WeirdFill(256, 2U << 8, 255));
        Assert.IsType<FastLocalBloomBitsReader>(reader);
        Assert.Equal(9957045189927952471UL, PackedMatches(reader));
    }

    [Theory]
    [InlineData(1U, 11384799501900898790UL)] // one 256-byte line
    [InlineData(2U, 10157853359773492589UL)] // two 128-byte lines
    [InlineData(4U, 7123594913907464682UL)] // four 64-byte lines
    public void RawSchemaLegacyBloomReadsLikeRocksDb(uint numLines, ulong expected)
    {
        var reader = new FastLocalBloomPolicy().CreateReader(RawFilter.WeirdFill(256, numLines, 2));
        Assert.IsType<LegacyBloomBitsReader>(reader);
        Assert.Equal(expected, PackedMatches(reader));
    }
}
