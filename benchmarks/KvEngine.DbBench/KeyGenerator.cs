using System.Buffers.Binary;

namespace KvEngine.DbBench;

/// <summary>
/// db_bench's keys: the key number as 8 big-endian bytes, then '0' characters up to key_size
/// (GenerateKeyFromInt with keys_per_prefix 0). Writes into a caller-owned buffer: no allocation.
/// </summary>
internal static class KeyGenerator
{
    public static void Fill(Span<byte> key, long number)
    {
        BinaryPrimitives.WriteInt64BigEndian(key, number);
        key[8..].Fill((byte)'0');
    }

    /// <summary>
    /// db_bench's GenerateKeyFromInt with -keys_per_prefix: the prefix number (key number modulo
    /// num / keys_per_prefix) big-endian in min(prefix_size, 8) bytes, '0' up to prefix_size, then
    /// the key number big-endian in up to 8 bytes, then '0's.
    /// </summary>
    public static void Fill(Span<byte> key, long number, long numKeys, long keysPerPrefix, int prefixSize)
    {
        if (keysPerPrefix <= 0)
        {
            Fill(key, number);
            return;
        }
        int pos = 0;
        long numPrefix = Math.Max(1, numKeys / keysPerPrefix);
        ulong prefix = (ulong)(number % numPrefix);
        int prefixBytes = Math.Min(prefixSize, 8);
        for (int i = 0; i < prefixBytes; i++)
        {
            key[i] = (byte)(prefix >> ((prefixBytes - i - 1) << 3));
        }
        if (prefixSize > 8)
        {
            key[8..prefixSize].Fill((byte)'0');
        }
        pos += prefixSize;
        int numberBytes = Math.Min(key.Length - pos, 8);
        for (int i = 0; i < numberBytes; i++)
        {
            key[pos + i] = (byte)((ulong)number >> ((numberBytes - i - 1) << 3));
        }
        pos += numberBytes;
        key[pos..].Fill((byte)'0');
    }
}
