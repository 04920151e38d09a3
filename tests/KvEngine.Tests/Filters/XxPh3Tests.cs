using KvEngine.Filters;

namespace KvEngine.Tests.Filters;

// Golden values from RocksDB util/hash_test.cc: Hash64 (XXPH3) is part of the filter format.
public class XxPh3Tests
{
    [Theory]
    [InlineData("", 5999572062939766020UL)]
    [InlineData("08", 583283813901344696UL)]
    [InlineData("17", 16175549975585474943UL)]
    [InlineData("9a", 16322991629225003903UL)]
    [InlineData("1c", 13269285487706833447UL)]
    [InlineData("4d76", 6859542833406258115UL)]
    [InlineData("52d5", 4919611532550636959UL)]
    [InlineData("91f7", 14199427467559720719UL)]
    [InlineData("d627", 12292689282614532691UL)]
    [InlineData("30460b", 11404699285340020889UL)]
    [InlineData("56dcd6", 12404347133785524237UL)]
    [InlineData("d45233", 15853805298481534034UL)]
    [InlineData("6ab5f4", 16863488758399383382UL)]
    [InlineData("6753811c", 9010661983527562386UL)]
    [InlineData("69b8c088", 6611781377647041447UL)]
    [InlineData("1e84af2d", 15290969111616346501UL)]
    [InlineData("46dc54be", 7063754590279313623UL)]
    [InlineData("d07a6eea56", 6384167718754869899UL)]
    [InlineData("8683d5a4d8", 16874407254108011067UL)]
    [InlineData("b746bb77ce", 16809880630149135206UL)]
    [InlineData("6ca8bce599", 1249038833153141148UL)]
    [InlineData("5c5ee1a07381", 17358142495308219330UL)]
    [InlineData("085d731ce52e", 4237646583134806322UL)]
    [InlineData("42fbf252b410", 4373664924115234051UL)]
    [InlineData("73e1ff569cce", 12012981210634596029UL)]
    [InlineData("5cbe9775549a52", 5716522398211028826UL)]
    [InlineData("16823949882b36", 15604531309862565013UL)]
    [InlineData("5977f0a724f478", 8601330687345614172UL)]
    [InlineData("d3a57c0ec00207", 8088079329364056942UL)]
    [InlineData("311b98759622d39a", 9844314944338447628UL)]
    [InlineData("38d6f72820b48ae9", 10973293517982163143UL)]
    [InlineData("bb185df41203f799", 9986007080564743219UL)]
    [InlineData("80d43b3bae22a278", 1729303145008254458UL)]
    [InlineData("1ab5d0feabc361b299", 13253403748084181481UL)]
    [InlineData("8e4ac318202f06e63c", 7768754303876232188UL)]
    [InlineData("b6c0dd053fc4864cef", 12439346786701492UL)]
    [InlineData("9a5f780daf50e11f55", 10841838338450144690UL)]
    [InlineData("226f391ff8dd4f521794", 12883919702069153152UL)]
    [InlineData("32892a75483a4a0269dd", 12692903507676842188UL)]
    [InlineData("06925cf4880e7e68383e", 6540985900674032620UL)]
    [InlineData("bd2c6338bfe978b7bf15", 10551812464348219044UL)]
    public void Hash64SmallValueSchema(string hex, ulong expected)
    {
        Assert.Equal(expected, XxPh3.Hash64(Convert.FromHexString(hex)));
        Assert.Equal(expected, XxPh3.Hash64(Convert.FromHexString(hex), 0));
    }

    // Each descriptor letter encodes Hash64(prefix of length i) % 61, for i in 0..429; this covers
    // every XXPH3 length class up to the first partial block of the long-input path.
    [Theory]
    [InlineData("foo",
        "cRhyWsY67B6klRA1udmOuiYuX7IthyGBKqbeosz2hzVglWCmQx8nEdnpkvPfYX56Up2OWOTV" +
        "lTzfAoYwvtqKzjD8E9xttR2unelbXbIV67NUe6bOO23BxaSFRcA3njGu5cUWfgwOqNoTsszp" +
        "uPvKRP6qaUR5VdoBkJUCFIefd7edlNK5mv6JYWaGdwxehg65hTkTmjZoPKxTZo4PLyzbL9U4" +
        "xt12ITSfeP2MfBHuLI2z2pDlBb44UQKVMx27LEoAHsdLp3WfWfgH3sdRBRCHm33UxCM4QmE2" +
        "xJ7gqSvNwTeH7v9GlC8zWbGroyD3UVNeShMLx29O7tH1biemLULwAHyIw8zdtLMDpEJ8m2ic" +
        "l6Lb4fDuuFNAs1GCVUthjK8CV8SWI8Rsz5THSwn5CGhpqUwSZcFknjwWIl5rNCvDxXJqYr")]
    [InlineData("Rocks",
        "c1EeRkrzgOYWLA8PuhJrwTePJewoB44WdXYDfhbk3ZxTqqg25WlPExDl7IKIQLJvnA6gJxxn" +
        "9TCSLkFGfJeXehaSS1GBqWSzfhEH4VXiXIUCuxJXxtKXcSC6FrNIQGTZbYDiUOLD6Y5inzrF" +
        "9etwQhXUBanw55xAUdNMFQAm2GjJ6UDWp2mISLiMMkLjANWMKLaZMqaFLX37qB4MRO1ooVRv" +
        "zSvaNRSCLxlggQCasQq8icWjzf3HjBlZtU6pd4rkaUxSzHqmo9oM5MghbU5Rtxg8wEfO7lVN" +
        "5wdMONYecslQTwjZUpO1K3LDf3K3XK6sUXM6ShQQ3RHmMn2acB4YtTZ3QQcHYJSOHn2DuWpa" +
        "Q8RqzX5lab92YmOLaCdOHq1BPsM7SIBzMdLgePNsJ1vvMALxAaoDUHPxoFLO2wx18IXnyX")]
    [InlineData("RocksDB",
        "c1EeRkukbkb28wLTahwD2sfUhZzaBEnF8SVrxnPVB6A7b8CaAl3UKsDZISF92GSq2wDCukOq" +
        "Jgrsp7A3KZhDiLW8dFXp8UPqPxMCRlMdZeVeJ2dJxrmA6cyt99zkQFj7ELbut6jAeVqARFnw" +
        "fnWVXOsaLrq7bDCbMcns2DKvTaaqTCLMYxI7nhtLpFN1jR755FRQFcOzrrDbh7QhypjdvlYw" +
        "cdAMSZgp9JMHxbM23wPSuH6BOFgxejz35PScZfhDPvTOxIy1jc3MZsWrMC3P324zNolO7JdW" +
        "CX2I5UDKjjaEJfxbgVgJIXxtQGlmj2xkO5sPpjULQV4X2HlY7FQleJ4QRaJIB4buhCA4vUTF" +
        "eMFlxCIYUpTCsal2qsmnGOWa8WCcefrohMjDj1fjzSvSaQwlpyR1GZHF2uPOoQagiCpHpm")]
    public void Hash64LargeValueSchema(string repeat, string expected)
    {
        Assert.Equal(expected, Descriptor(repeat, 430));
    }

    [Fact]
    public void Hash64MiscSeedAndSizeChangeTheHash()
    {
        foreach (byte fill in new byte[] { 0, (byte)'a', (byte)'1', 0xff })
        {
            byte[] str = new byte[1000];
            Array.Fill(str, fill);
            for (int size = 0; size <= str.Length; size += size < 300 ? 1 : 7)
            {
                ReadOnlySpan<byte> data = str.AsSpan(0, size);
                ulong here = XxPh3.Hash64(data, 0);
                Assert.Equal(here, XxPh3.Hash64(data));
                for (ulong seed = 1; seed != 0; seed <<= 1)
                {
                    Assert.NotEqual(here, XxPh3.Hash64(data, seed));
                }
                int maxSmallerBy = Math.Min(30, size);
                for (int smallerBy = 1; smallerBy <= maxSmallerBy; smallerBy++)
                {
                    Assert.NotEqual(here, XxPh3.Hash64(str.AsSpan(0, size - smallerBy)));
                }
            }
        }
    }

    [Fact]
    public void Hash64TrivialInputsHaveNonZeroHalves()
    {
        for (ulong seed = 0; seed < 0x10000; seed++)
        {
            ulong here = XxPh3.Hash64([], seed);
            Assert.NotEqual(0u, (uint)here);
            Assert.NotEqual(0u, (uint)(here >> 32));
        }
        byte[] input = new byte[2];
        for (int len = 1; len <= 2; len++)
        {
            for (int i = 0; (i >> (len * 8)) == 0; i++)
            {
                input[0] = (byte)i;
                input[1] = (byte)(i >> 8);
                ulong here = XxPh3.Hash64(input.AsSpan(0, len));
                Assert.NotEqual(0u, (uint)here);
                Assert.NotEqual(0u, (uint)(here >> 32));
            }
        }
    }

    private static string Descriptor(string repeat, int limit)
    {
        const string mod61 = "abcdefghijklmnopqrstuvwxyz123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
        byte[] input = new byte[limit + repeat.Length];
        for (int i = 0; i < input.Length; i++)
        {
            input[i] = (byte)repeat[i % repeat.Length];
        }
        char[] result = new char[limit];
        for (int i = 0; i < limit; i++)
        {
            result[i] = mod61[(int)(XxPh3.Hash64(input.AsSpan(0, i)) % 61)];
        }
        return new string(result);
    }
}
