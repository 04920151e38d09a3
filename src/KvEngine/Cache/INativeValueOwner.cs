namespace KvEngine.Cache;

/// <summary>
/// Frees the native values an <see cref="LruCache"/> holds for its owner
/// (<see cref="LruCache.InsertNative"/>). A native value is an address whose first eight bytes are
/// two int32s, the bytes its allocations asked for and their usable size, which the cache reads
/// for its accounts and charge. Implementations are thread-safe.
/// </summary>
internal interface INativeValueOwner
{
    /// <summary>Frees <paramref name="value"/>: once, when its entry has left the cache and its last handle is released.</summary>
    void FreeNativeValue(nint value);
}
