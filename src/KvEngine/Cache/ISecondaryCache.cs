using KvEngine.Memory;

namespace KvEngine.Cache;

/// <summary>A tier below an <see cref="LruCache"/>: takes what the primary evicts and gives back bytes on a primary miss. Thread-safe.</summary>
internal interface ISecondaryCache
{
    /// <summary>Offers an evicted value's bytes (a value's <see cref="CacheValue.Contents"/>, or a native block's); the tier copies what it keeps.</summary>
    void Demote(in CacheKey key, ReadOnlySpan<byte> contents, CacheEntryRole role);

    /// <summary>
    /// On a hit removes the entry and returns its bytes in a new buffer the caller owns. False on a
    /// miss, a placeholder, or a corrupt entry (which is dropped).
    /// </summary>
    bool TryPromote(in CacheKey key, out NativeBuffer contents, out CacheEntryRole role, KvStatistics? stats);
}
