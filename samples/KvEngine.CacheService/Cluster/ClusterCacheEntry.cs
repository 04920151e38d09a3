using System.Buffers.Binary;
using KvEngine.Extensions.Caching;

namespace KvEngine.CacheService.Cluster;

/// <summary>
/// Entries of the replicated cache, in KvEngineCache's stored layout (docs/formats/cache_entry.md:
/// a 26-byte header, then the bytes) so a node's database reads like a KvEngineCache's. Only
/// absolute expirations (the HTTP API's ttl): the leader computes the expiry once and every node
/// stores the same bytes. Stateless and thread-safe.
/// </summary>
internal static class ClusterCacheEntry
{
    private const byte FlagAbsolute = 0x1;

    /// <summary>Writes the header for an entry expiring at <paramref name="expiresAtUtcTicks"/> (long.MaxValue: never).</summary>
    public static void WriteHeader(Span<byte> header, long expiresAtUtcTicks)
    {
        header[0] = CacheEntryFormat.Version;
        header[1] = expiresAtUtcTicks == long.MaxValue ? (byte)0 : FlagAbsolute;
        BinaryPrimitives.WriteInt64LittleEndian(header.Slice(2), expiresAtUtcTicks);
        BinaryPrimitives.WriteInt64LittleEndian(header.Slice(10), expiresAtUtcTicks);
        BinaryPrimitives.WriteInt64LittleEndian(header.Slice(18), 0);
    }

    /// <summary>The cached bytes of a stored value, or false when it has expired at <paramref name="now"/>.</summary>
    /// <exception cref="KvCorruptionException">The stored value is not a cache entry.</exception>
    public static bool TryGetLiveValue(byte[] stored, DateTimeOffset now, out ReadOnlyMemory<byte> value)
    {
        value = default;
        if (CacheEntryFormat.IsExpired(stored, now))
        {
            return false;
        }
        value = stored.AsMemory(CacheEntryFormat.HeaderSize);
        return true;
    }
}
