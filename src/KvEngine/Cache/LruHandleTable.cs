namespace KvEngine.Cache;

/// <summary>
/// The hash table of an <see cref="LruCacheShard"/>, RocksDB's LRUHandleTable: a power-of-two
/// array of buckets, each a chain of entries through <see cref="LruEntry.NextHash"/>, doubled when
/// the entries outnumber the buckets. Intrusive, so an entry costs its own link and, at the load
/// factor between 1/2 and 1, one or two bucket slots (8-16 bytes). A block cache holds one entry
/// per cached block: ~90,000 in a 400 MB cache.
/// <para>
/// Invariants: an entry is in at most one table, in the chain of bucket <c>Key.Hash &amp; mask</c>,
/// and its key is unique in the table; <see cref="Count"/> is the number of entries in chains.
/// Not thread-safe: the shard's lock guards it.
/// </para>
/// </summary>
internal sealed unsafe class LruHandleTable
{
    private const int InitialBuckets = 16;

    private LruEntry*[] _buckets = new LruEntry*[InitialBuckets];
    private int _count;

    public int Count => _count;

    /// <summary>The entry of <paramref name="key"/>, or null.</summary>
    public LruEntry* Lookup(in CacheKey key)
    {
        LruEntry* e = _buckets[(int)key.Hash & (_buckets.Length - 1)];
        while (e != null && (e->OwnerId != key.OwnerId || e->Offset != key.Offset))
        {
            e = e->NextHash;
        }
        return e;
    }

    /// <summary>Adds <paramref name="e"/>, taking out and returning the entry it replaces (same key), or null.</summary>
    public LruEntry* Insert(LruEntry* e)
    {
        ref LruEntry* slot = ref FindSlot(e->Key);
        LruEntry* old = slot;
        e->NextHash = old != null ? old->NextHash : null;
        slot = e;
        if (old == null)
        {
            if (++_count > _buckets.Length)
            {
                Grow();
            }
        }
        else
        {
            old->NextHash = null;
        }
        return old;
    }

    /// <summary>Takes out and returns the entry of <paramref name="key"/>, or null.</summary>
    public LruEntry* Remove(in CacheKey key)
    {
        ref LruEntry* slot = ref FindSlot(key);
        LruEntry* e = slot;
        if (e != null)
        {
            slot = e->NextHash;
            e->NextHash = null;
            _count--;
        }
        return e;
    }

    /// <summary>Visits every entry (no change to the table meanwhile).</summary>
    public Enumerator GetEnumerator() => new(_buckets);

    /// <summary>The link that points at <paramref name="key"/>'s entry (a bucket, or an entry's <see cref="LruEntry.NextHash"/>), or the null link ending its chain.</summary>
    private ref LruEntry* FindSlot(in CacheKey key)
    {
        ref LruEntry* slot = ref _buckets[(int)key.Hash & (_buckets.Length - 1)];
        while (slot != null && (slot->OwnerId != key.OwnerId || slot->Offset != key.Offset))
        {
            slot = ref slot->NextHash;
        }
        return ref slot;
    }

    private void Grow()
    {
        var grown = new LruEntry*[_buckets.Length * 2];
        int mask = grown.Length - 1;
        foreach (LruEntry* head in _buckets)
        {
            LruEntry* e = head;
            while (e != null)
            {
                LruEntry* next = e->NextHash;
                ref LruEntry* bucket = ref grown[(int)e->Key.Hash & mask];
                e->NextHash = bucket;
                bucket = e;
                e = next;
            }
        }
        _buckets = grown;
    }

    /// <summary>Walks the buckets and their chains.</summary>
    public struct Enumerator
    {
        private readonly LruEntry*[] _buckets;
        private int _bucket;
        private LruEntry* _current;

        internal Enumerator(LruEntry*[] buckets)
        {
            _buckets = buckets;
            _bucket = -1;
            _current = null;
        }

        public readonly LruHandle Current => new(_current);

        public bool MoveNext()
        {
            _current = _current != null ? _current->NextHash : null;
            while (_current == null)
            {
                if (++_bucket >= _buckets.Length)
                {
                    return false;
                }
                _current = _buckets[_bucket];
            }
            return true;
        }
    }
}
