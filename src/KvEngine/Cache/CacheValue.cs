using KvEngine.Memory;

namespace KvEngine.Cache;

/// <summary>
/// A value held by an <see cref="LruCache"/>. The cache calls <see cref="Free"/> exactly once, when
/// the entry has left the cache and its last handle is released; until then the value must stay
/// readable. Implementations are immutable apart from <see cref="Free"/>.
/// </summary>
internal abstract class CacheValue
{
    public abstract CacheEntryRole Role { get; }

    /// <summary>Bytes the value asked its allocator for.</summary>
    public abstract long RequestedBytes { get; }

    /// <summary>Usable bytes of the allocations holding the value: what the cache charges.</summary>
    public abstract long AllocatedBytes { get; }

    /// <summary>True when <see cref="Contents"/> is the whole value, so a secondary cache can keep a copy.</summary>
    public abstract bool CanDemote { get; }

    /// <summary>The value's bytes (only when <see cref="CanDemote"/>).</summary>
    public abstract ReadOnlySpan<byte> Contents { get; }

    public abstract void Free();

    /// <summary>
    /// True when the value is a native block an <see cref="LruCache"/> entry can hold itself:
    /// <paramref name="buffer"/> (from <paramref name="allocator"/>) is all of it, and its bytes
    /// were checked to parse. The value keeps the buffer until <see cref="BecomeView"/>.
    /// </summary>
    public virtual bool TryGetNativeBlock(NativeAllocator allocator, out NativeBuffer buffer)
    {
        buffer = default;
        return false;
    }

    /// <summary>
    /// The cache entry took the buffer <see cref="TryGetNativeBlock"/> gave: from now on the value
    /// reads it without owning it (<see cref="IsView"/>), and <see cref="Free"/> frees no bytes.
    /// </summary>
    public virtual void BecomeView() => throw new InvalidOperationException("Only a native block's buffer can move into a cache entry.");

    /// <summary>True when the value reads bytes a cache entry owns (see <see cref="BecomeView"/>).</summary>
    public virtual bool IsView => false;
}
