using System.Buffers.Binary;
using KvEngine.Filters;
using KvEngine.Util;

namespace KvEngine.Tests.Filters;

/// <summary>Key and filter helpers shared by the filter tests, shaped like RocksDB's bloom_test.cc.</summary>
internal static class FilterTestKeys
{
    /// <summary>RocksDB bloom_test's Key(i): the 4-byte little-endian encoding of i.</summary>
    public static byte[] Key(int i)
    {
        byte[] key = new byte[4];
        BinaryPrimitives.WriteInt32LittleEndian(key, i);
        return key;
    }

    /// <summary>Builds a filter from keys Key(from) .. Key(toExclusive - 1).</summary>
    public static byte[] Build(double bitsPerKey, int from, int toExclusive)
    {
        var policy = new FastLocalBloomPolicy(bitsPerKey);
        using FastLocalBloomBitsBuilder builder = policy.CreateBuilder();
        Span<byte> key = stackalloc byte[4];
        for (int i = from; i < toExclusive; i++)
        {
            BinaryPrimitives.WriteInt32LittleEndian(key, i);
            builder.AddKey(key);
        }
        using var output = new ByteBuffer();
        builder.Finish(output);
        return output.WrittenSpan.ToArray();
    }

    /// <summary>bloom_test's FirstFPs: the first <paramref name="count"/> i with Key(i + 1000000) matching.</summary>
    public static string FirstFps(IFilterBitsReader reader, int count)
    {
        var found = new List<int>();
        Span<byte> key = stackalloc byte[4];
        for (int i = 0; i < 1000000 && found.Count < count; i++)
        {
            BinaryPrimitives.WriteInt32LittleEndian(key, i + 1000000);
            if (reader.MayMatch(key))
            {
                found.Add(i);
            }
        }
        return string.Join(',', found);
    }

    /// <summary>bloom_test's PackedMatches: bit i set when Key(i + 12345) matches.</summary>
    public static ulong PackedMatches(IFilterBitsReader reader)
    {
        ulong result = 0;
        Span<byte> key = stackalloc byte[4];
        for (int i = 0; i < 64; i++)
        {
            BinaryPrimitives.WriteInt32LittleEndian(key, i + 12345);
            if (reader.MayMatch(key))
            {
                result |= 1UL << i;
            }
        }
        return result;
    }

    /// <summary>Probe count as bloom_test's GetNumProbesFromFilterData reads it.</summary>
    public static int NumProbesFromFilterData(byte[] filter)
    {
        sbyte raw = (sbyte)filter[^5];
        return raw == -1 ? filter[^3] : raw;
    }
}
