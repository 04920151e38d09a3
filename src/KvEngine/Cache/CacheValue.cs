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
}
