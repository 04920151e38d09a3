using KvEngine.Memory;

namespace KvEngine.Cache;

/// <summary>Rebuilds a value promoted from the secondary cache (RocksDB's create callback).</summary>
internal interface ICacheValueFactory
{
    /// <summary>
    /// Takes ownership of <paramref name="contents"/> (the bytes <see cref="CacheValue.Contents"/>
    /// gave) and wraps it; on failure it frees the buffer and throws.
    /// </summary>
    CacheValue Create(NativeBuffer contents, in CacheKey key, CacheEntryRole role);
}
