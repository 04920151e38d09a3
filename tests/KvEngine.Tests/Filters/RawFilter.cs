using System.Buffers.Binary;

namespace KvEngine.Tests.Filters;

/// <summary>
/// RocksDB bloom_test's RawFilterTester: a 3000-byte buffer whose tail holds a filter of the given
/// bit length, ending in a trailer of one byte then a fixed32.
/// </summary>
internal static class RawFilter
{
    private const int BufferSize = 3000;

    public static byte[] Fill(int lenWithoutMetadata, uint trailerWord, byte trailerByte, bool ones)
    {
        byte[] data = new byte[BufferSize];
        Array.Fill(data, ones ? (byte)0xff : (byte)0);
        return Tail(data, lenWithoutMetadata, trailerWord, trailerByte);
    }

    public static byte[] WeirdFill(int lenWithoutMetadata, uint trailerWord, byte trailerByte)
    {
        byte[] data = new byte[BufferSize];
        for (int i = 0; i < data.Length; i++)
        {
            data[i] = (byte)(0x7b7b >> (i % 7));
        }
        return Tail(data, lenWithoutMetadata, trailerWord, trailerByte);
    }

    private static byte[] Tail(byte[] data, int lenWithoutMetadata, uint trailerWord, byte trailerByte)
    {
        data[BufferSize - 5] = trailerByte;
        BinaryPrimitives.WriteUInt32LittleEndian(data.AsSpan(BufferSize - 4), trailerWord);
        int len = Math.Max(lenWithoutMetadata + 5, 0);
        return data[(BufferSize - len)..];
    }
}
