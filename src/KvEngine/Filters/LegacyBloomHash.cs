using System.Buffers.Binary;

namespace KvEngine.Filters;

/// <summary>
/// RocksDB's 32-bit <c>Hash(data, n, seed)</c> (util/hash.cc, LevelDB's Murmur-like hash) and
/// <c>BloomHash(key)</c> = <c>Hash(key, 0xbc9f1d34)</c>, the hash of the legacy
/// (format_version &lt; 5) Bloom filter. Part of the on-disk format, including its quirk of
/// sign-extending the 1-3 tail bytes (as a signed char) before adding them.
/// Stateless and thread-safe.
/// </summary>
internal static class LegacyBloomHash
{
    /// <summary>The seed RocksDB's BloomHash uses.</summary>
    public const uint BloomSeed = 0xbc9f1d34;

    /// <summary>RocksDB's <c>BloomHash(key)</c>.</summary>
    public static uint BloomHash(ReadOnlySpan<byte> key) => Hash(key, BloomSeed);

    /// <summary>RocksDB's <c>Hash(data, n, seed)</c>.</summary>
    public static uint Hash(ReadOnlySpan<byte> data, uint seed)
    {
        const uint m = 0xc6a4a793;
        const int r = 24;
        uint h = seed ^ ((uint)data.Length * m);
        int i = 0;
        for (; i + 4 <= data.Length; i += 4)
        {
            h += BinaryPrimitives.ReadUInt32LittleEndian(data.Slice(i));
            h *= m;
            h ^= h >> 16;
        }
        int rest = data.Length - i;
        if (rest == 0)
        {
            return h;
        }
        if (rest == 3)
        {
            h += (uint)((sbyte)data[i + 2] << 16);
        }
        if (rest >= 2)
        {
            h += (uint)((sbyte)data[i + 1] << 8);
        }
        h += (uint)(sbyte)data[i];
        h *= m;
        h ^= h >> r;
        return h;
    }
}
