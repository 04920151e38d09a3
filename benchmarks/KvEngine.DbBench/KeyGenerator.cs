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
}
