using System.Runtime.CompilerServices;

namespace KvEngine.Cache;

/// <summary>
/// Identifies one cached block: <see cref="OwnerId"/> is unique per table reader within a cache
/// (<see cref="LruCache.NewId"/>), <see cref="Offset"/> the block's offset in its file. Immutable.
/// </summary>
internal readonly struct CacheKey : IEquatable<CacheKey>
{
    public CacheKey(ulong ownerId, ulong offset)
    {
        OwnerId = ownerId;
        Offset = offset;
    }

    public ulong OwnerId { get; }

    public ulong Offset { get; }

    /// <summary>A 64-bit mix of both halves (murmur3's finalizer); the top bits pick the shard.</summary>
    public ulong Hash
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get
        {
            ulong h = (OwnerId * 0x9E3779B97F4A7C15UL) ^ Offset;
            h ^= h >> 33;
            h *= 0xFF51AFD7ED558CCDUL;
            h ^= h >> 33;
            h *= 0xC4CEB9FE1A85EC53UL;
            h ^= h >> 33;
            return h;
        }
    }

    public bool Equals(CacheKey other) => OwnerId == other.OwnerId && Offset == other.Offset;

    public override bool Equals(object? obj) => obj is CacheKey k && Equals(k);

    public override int GetHashCode() => (int)Hash;

    public override string ToString() => $"{OwnerId}:{Offset}";
}
