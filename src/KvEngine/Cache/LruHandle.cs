namespace KvEngine.Cache;

/// <summary>
/// One cache entry, also the handle callers hold. <see cref="Key"/>, <see cref="Value"/>,
/// <see cref="Charge"/> and <see cref="HighPriority"/> are set once per use (by <see cref="Init"/>,
/// before the entry is published under its shard's lock) and read freely by whoever holds a
/// reference; the other fields are guarded by the owning shard's lock. An entry is in its shard's
/// LRU lists exactly when it is in the table and has no references.
/// <para>
/// Handles are recycled (<see cref="Util.ThreadLocalPool{T}"/>) by <see cref="LruCache"/> once the
/// entry has left the cache, its last reference is released and its value is freed: from then on
/// no one may hold it, which the reference count guarantees for every caller that releases each
/// handle exactly once and does not touch it afterwards.
/// </para>
/// </summary>
internal sealed class LruHandle
{
    /// <summary>A blank handle for <see cref="Init"/>.</summary>
    public LruHandle()
    {
        Value = CachePlaceholder.Instance;
    }

    public CacheKey Key { get; private set; }

    public CacheValue Value { get; private set; }

    /// <summary>Usable bytes of the value plus the entry overhead.</summary>
    public long Charge { get; private set; }

    public bool HighPriority { get; private set; }

    internal int Refs;
    internal bool InCache;
    internal bool InHighPool;
    internal bool Demote;
    internal LruHandle? Prev;
    internal LruHandle? Next;
    internal LruHandle? NextHash; // the next entry in its LruHandleTable bucket

    /// <summary>A list sentinel: a ring of itself.</summary>
    internal static LruHandle NewSentinel()
    {
        var h = new LruHandle();
        h.Prev = h;
        h.Next = h;
        return h;
    }

    /// <summary>Makes a blank (new or recycled) handle the entry for <paramref name="value"/>, unreferenced and outside any shard.</summary>
    public void Init(in CacheKey key, CacheValue value, long charge, bool highPriority)
    {
        Key = key;
        Value = value;
        Charge = charge;
        HighPriority = highPriority;
        Refs = 0;
        InCache = false;
        InHighPool = false;
        Demote = false;
        Prev = null;
        Next = null;
        NextHash = null;
    }

    /// <summary>Forgets the (freed) value before the handle goes back to the pool.</summary>
    internal void Clear()
    {
        Key = default;
        Value = CachePlaceholder.Instance;
        Charge = 0;
        Next = null;
        Prev = null;
        NextHash = null;
    }
}
