namespace KvEngine.Cache;

/// <summary>
/// One cache entry, also the handle callers hold. Fields other than <see cref="Key"/>,
/// <see cref="Value"/> and <see cref="Charge"/> are guarded by the owning shard's lock.
/// An entry is in its shard's LRU lists exactly when it is in the table and has no references.
/// </summary>
internal sealed class LruHandle
{
    public LruHandle(in CacheKey key, CacheValue value, long charge, bool highPriority)
    {
        Key = key;
        Value = value;
        Charge = charge;
        HighPriority = highPriority;
    }

    /// <summary>List sentinel.</summary>
    internal LruHandle()
    {
        Value = CachePlaceholder.Instance;
        Prev = this;
        Next = this;
    }

    public CacheKey Key { get; }

    public CacheValue Value { get; }

    /// <summary>Usable bytes of the value plus the entry overhead.</summary>
    public long Charge { get; }

    public bool HighPriority { get; }

    internal int Refs;
    internal bool InCache;
    internal bool InHighPool;
    internal bool Demote;
    internal LruHandle? Prev;
    internal LruHandle? Next;
}
