using KvEngine.Filters;

namespace KvEngine.Tests.Filters;

// Golden values from RocksDB util/hash_test.cc (HashTest.Values, seed 0xbc9f1d34 = BloomHash).
public class LegacyBloomHashTests
{
    [Theory]
    [InlineData("", 3164544308U)]
    [InlineData("08", 422599524U)]
    [InlineData("17", 3168152998U)]
    [InlineData("9a", 3195034349U)]
    [InlineData("1c", 2651681383U)]
    [InlineData("4d76", 2447836956U)]
    [InlineData("52d5", 3854228105U)]
    [InlineData("91f7", 31066776U)]
    [InlineData("d627", 1806091603U)]
    [InlineData("30460b", 3808221797U)]
    [InlineData("56dcd6", 2157698265U)]
    [InlineData("d45233", 1721992661U)]
    [InlineData("6ab5f4", 2469105222U)]
    [InlineData("6753811c", 118283265U)]
    [InlineData("69b8c088", 3416318611U)]
    [InlineData("1e84af2d", 3315003572U)]
    [InlineData("46dc54be", 447346355U)]
    [InlineData("d07a6eea56", 4255445370U)]
    [InlineData("8683d5a4d8", 2390603402U)]
    [InlineData("b746bb77ce", 2048907743U)]
    [InlineData("6ca8bce599", 2177978500U)]
    [InlineData("5c5ee1a07381", 1036846008U)]
    [InlineData("085d731ce52e", 229980482U)]
    [InlineData("42fbf252b410", 3655585422U)]
    [InlineData("73e1ff569cce", 3502708029U)]
    [InlineData("5cbe9775549a52", 815120748U)]
    [InlineData("16823949882b36", 3056033698U)]
    [InlineData("5977f0a724f478", 587205227U)]
    [InlineData("d3a57c0ec00207", 2030937252U)]
    [InlineData("311b98759622d39a", 469635402U)]
    [InlineData("38d6f72820b48ae9", 3530274698U)]
    [InlineData("bb185df41203f799", 1974545809U)]
    [InlineData("80d43b3bae22a278", 3563570120U)]
    [InlineData("1ab5d0feabc361b299", 2706087434U)]
    [InlineData("8e4ac318202f06e63c", 1534654151U)]
    [InlineData("b6c0dd053fc4864cef", 2355554696U)]
    [InlineData("9a5f780daf50e11f55", 1400800912U)]
    [InlineData("226f391ff8dd4f521794", 3420325137U)]
    [InlineData("32892a75483a4a0269dd", 3427803584U)]
    [InlineData("06925cf4880e7e68383e", 1152407945U)]
    [InlineData("bd2c6338bfe978b7bf15", 3382479516U)]
    public void HashValuesMatchRocksDb(string hex, uint expected)
    {
        Assert.Equal(expected, LegacyBloomHash.Hash(Convert.FromHexString(hex), LegacyBloomHash.BloomSeed));
        Assert.Equal(expected, LegacyBloomHash.BloomHash(Convert.FromHexString(hex)));
    }
}
