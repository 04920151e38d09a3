namespace KvEngine.Cache;

/// <summary>
/// One shard of an <see cref="LruCache"/>: a hash table of entries plus two LRU lists of the
/// unreferenced ones, a high-priority pool (at most <c>capacity x highPriPoolRatio</c>, overflow
/// moves its oldest entries to the low pool) and a low-priority pool, evicted first.
/// <para>
/// Invariants (under the lock): <see cref="Usage"/> sums the charges of the entries in the table
/// and of erased entries still referenced; an entry is in a list exactly when it is in the table
/// with no references; referenced entries are never freed. Evicting and freeing happen in two
/// steps: under the lock an entry is detached (its charge leaves the usage) and chained through
/// <see cref="LruEntry.Next"/> to a list the caller frees after releasing the lock, so no value
/// is freed (or demoted) under it. Entries are native (<see cref="LruEntry"/>); the two list
/// sentinels live in one pinned array the shard keeps.
/// </para>
/// Thread-safe; every operation holds the lock for O(1) work plus the entries it evicts.
/// </summary>
internal sealed unsafe class LruCacheShard
{
    private readonly Lock _lock = new();
    private readonly LruHandleTable _table = new();
    private readonly LruEntry[] _sentinels = GC.AllocateArray<LruEntry>(2, pinned: true);
    private readonly LruEntry* _low; // sentinel: Next = oldest, Prev = newest
    private readonly LruEntry* _high;
    private readonly bool _strict;
    private readonly double _highRatio;
    private long _capacity;
    private long _highCapacity;
    private long _usage;
    private long _lruUsage;
    private long _highUsage;
    private long _requested;
    private long _allocated;

    public LruCacheShard(long capacity, bool strictCapacity, double highPriPoolRatio)
    {
        _strict = strictCapacity;
        _highRatio = highPriPoolRatio;
        _capacity = capacity;
        _highCapacity = (long)(capacity * highPriPoolRatio);
        fixed (LruEntry* sentinels = _sentinels)
        {
            _low = sentinels; // pinned: the pointers stay valid as long as the array lives
            _high = sentinels + 1;
        }
        _low->Prev = _low->Next = _low;
        _high->Prev = _high->Next = _high;
    }

    public long Capacity => Volatile.Read(ref _capacity);

    public long Usage => Volatile.Read(ref _usage);

    /// <summary>Charges of entries someone holds a handle to.</summary>
    public long PinnedUsage
    {
        get
        {
            lock (_lock)
            {
                return _usage - _lruUsage;
            }
        }
    }

    /// <summary>Requested and allocated bytes of the values not yet freed (overhead excluded).</summary>
    public (long Requested, long Allocated) ValueBytes
    {
        get
        {
            lock (_lock)
            {
                return (_requested, _allocated);
            }
        }
    }

    public int Count
    {
        get
        {
            lock (_lock)
            {
                return _table.Count;
            }
        }
    }

    /// <summary>Adds each entry's count and charge to the slots of its role (indexed by <see cref="CacheEntryRole"/>).</summary>
    public void AddRoleStats(Span<long> counts, Span<long> charges)
    {
        lock (_lock)
        {
            foreach (LruHandle h in _table)
            {
                int role = (int)h.Role;
                counts[role]++;
                charges[role] += h.Charge;
            }
        }
    }

    /// <summary>Changes the capacity, evicting unreferenced entries (chained into <paramref name="freed"/>) down to it.</summary>
    public void SetCapacity(long capacity, ref LruEntry* freed)
    {
        lock (_lock)
        {
            _capacity = capacity;
            _highCapacity = (long)(capacity * _highRatio);
            EvictFromLru(0, ref freed);
        }
    }

    /// <summary>Finds <paramref name="key"/> and takes a reference; null on a miss. Allocates nothing.</summary>
    public LruEntry* Lookup(in CacheKey key)
    {
        lock (_lock)
        {
            LruEntry* h = _table.Lookup(key);
            if (h == null)
            {
                return null;
            }
            if (h->Refs == 0)
            {
                Unlink(h);
            }
            h->Refs++;
            return h;
        }
    }

    /// <summary>
    /// Inserts <paramref name="h"/> (replacing an entry with the same key). With
    /// <paramref name="wantHandle"/> the entry comes back referenced. Returns false, leaving the
    /// value to the caller, when the entry does not fit and either the capacity is strict or no
    /// handle is wanted (then the value is chained into <paramref name="freed"/>, as if inserted
    /// and evicted at once, and true is returned). <paramref name="freed"/> collects what to free.
    /// </summary>
    public bool Insert(LruEntry* h, bool wantHandle, ref LruEntry* freed)
    {
        lock (_lock)
        {
            EvictFromLru(h->Charge, ref freed);
            if (_usage + h->Charge > _capacity)
            {
                if (_strict && wantHandle)
                {
                    return false;
                }
                if (!wantHandle)
                {
                    h->Set(LruEntryFlags.Demote, true);
                    h->Next = freed;
                    freed = h;
                    return true;
                }
            }
            LruEntry* old = _table.Insert(h);
            if (old != null)
            {
                old->Set(LruEntryFlags.InCache, false);
                if (old->Refs == 0)
                {
                    Unlink(old);
                    Detach(old, demote: false, ref freed);
                }
            }
            var handle = new LruHandle(h);
            h->Set(LruEntryFlags.InCache, true);
            _usage += h->Charge;
            _requested += handle.RequestedBytes;
            _allocated += handle.AllocatedBytes;
            if (wantHandle)
            {
                h->Refs = 1;
            }
            else
            {
                Link(h);
            }
            return true;
        }
    }

    /// <summary>Drops a reference; the entry is freed (chained into <paramref name="freed"/>) when it was the last and the entry left the cache or the shard is over capacity.</summary>
    public void Release(LruEntry* h, ref LruEntry* freed)
    {
        lock (_lock)
        {
            if (h->Refs <= 0)
            {
                throw new InvalidOperationException($"Cache handle {h->Key} released more often than referenced.");
            }
            if (--h->Refs != 0)
            {
                return;
            }
            if (h->Has(LruEntryFlags.InCache))
            {
                if (_usage <= _capacity)
                {
                    Link(h);
                    return;
                }
                _table.Remove(h->Key);
                h->Set(LruEntryFlags.InCache, false);
                Detach(h, demote: true, ref freed);
                return;
            }
            Detach(h, demote: false, ref freed);
        }
    }

    /// <summary>Removes <paramref name="key"/>; a referenced entry is freed at its last release.</summary>
    public void Erase(in CacheKey key, ref LruEntry* freed)
    {
        lock (_lock)
        {
            LruEntry* h = _table.Remove(key);
            if (h != null)
            {
                h->Set(LruEntryFlags.InCache, false);
                if (h->Refs == 0)
                {
                    Unlink(h);
                    Detach(h, demote: false, ref freed);
                }
            }
        }
    }

    /// <summary>Removes every unreferenced entry (RocksDB's EraseUnRefEntries); <paramref name="demote"/> offers them to the secondary tier.</summary>
    public void EraseUnreferenced(bool demote, ref LruEntry* freed)
    {
        lock (_lock)
        {
            EvictList(_low, long.MinValue, demote, ref freed);
            EvictList(_high, long.MinValue, demote, ref freed);
        }
    }

    private void EvictFromLru(long charge, ref LruEntry* freed)
    {
        long target = _capacity - charge;
        EvictList(_low, target, demote: true, ref freed);
        EvictList(_high, target, demote: true, ref freed);
    }

    private void EvictList(LruEntry* sentinel, long target, bool demote, ref LruEntry* freed)
    {
        while (_usage > target && sentinel->Next != sentinel)
        {
            LruEntry* victim = sentinel->Next;
            Unlink(victim);
            _table.Remove(victim->Key);
            victim->Set(LruEntryFlags.InCache, false);
            Detach(victim, demote, ref freed);
        }
    }

    private void Detach(LruEntry* h, bool demote, ref LruEntry* freed)
    {
        LruHandle handle = new(h);
        _usage -= h->Charge;
        _requested -= handle.RequestedBytes;
        _allocated -= handle.AllocatedBytes;
        h->Set(LruEntryFlags.Demote, demote);
        h->Next = freed;
        freed = h;
    }

    private void Link(LruEntry* h)
    {
        LruEntry* list = h->Has(LruEntryFlags.HighPriority) && _highCapacity > 0 ? _high : _low;
        h->Set(LruEntryFlags.InHighPool, list == _high);
        AppendNewest(list, h);
        _lruUsage += h->Charge;
        if (list == _high)
        {
            _highUsage += h->Charge;
            while (_highUsage > _highCapacity && _high->Next != _high)
            {
                LruEntry* oldest = _high->Next;
                Remove(oldest);
                oldest->Set(LruEntryFlags.InHighPool, false);
                _highUsage -= oldest->Charge;
                AppendNewest(_low, oldest);
            }
        }
    }

    private void Unlink(LruEntry* h)
    {
        Remove(h);
        _lruUsage -= h->Charge;
        if (h->Has(LruEntryFlags.InHighPool))
        {
            _highUsage -= h->Charge;
            h->Set(LruEntryFlags.InHighPool, false);
        }
    }

    private static void AppendNewest(LruEntry* list, LruEntry* h)
    {
        h->Next = list;
        h->Prev = list->Prev;
        list->Prev->Next = h;
        list->Prev = h;
    }

    private static void Remove(LruEntry* h)
    {
        h->Prev->Next = h->Next;
        h->Next->Prev = h->Prev;
        h->Prev = null;
        h->Next = null;
    }
}
