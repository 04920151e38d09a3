namespace KvEngine.Cache;

/// <summary>
/// The hash table of an <see cref="LruCacheShard"/>, RocksDB's LRUHandleTable: a power-of-two
/// array of buckets, each a chain of handles through <see cref="LruHandle.NextHash"/>, doubled
/// when the entries outnumber the buckets. Intrusive, so an entry costs its handle's link and, at
/// the load factor between 1/2 and 1, one or two bucket slots (8-16 bytes) — where a
/// <c>Dictionary&lt;CacheKey, LruHandle&gt;</c> kept a 32-byte entry and a 4-byte bucket per slot
/// with up to twice the slots, and left each outgrown entry array (large-object heap from ~3,000
/// entries) to the GC. A block cache holds one entry per cached block: ~90,000 in a 400 MB cache.
/// <para>
/// Invariants: a handle is in at most one table, in the chain of bucket <c>Key.Hash &amp; mask</c>,
/// and its key is unique in the table; <see cref="Count"/> is the number of handles in chains.
/// Not thread-safe: the shard's lock guards it.
/// </para>
/// </summary>
internal sealed class LruHandleTable
{
    private const int InitialBuckets = 16;

    private LruHandle?[] _buckets = new LruHandle?[InitialBuckets];
    private int _count;

    public int Count => _count;

    /// <summary>The entry of <paramref name="key"/>, or null.</summary>
    public LruHandle? Lookup(in CacheKey key)
    {
        LruHandle? h = _buckets[(int)key.Hash & (_buckets.Length - 1)];
        while (h != null && !h.Key.Equals(key))
        {
            h = h.NextHash;
        }
        return h;
    }

    /// <summary>Adds <paramref name="h"/>, taking out and returning the entry it replaces (same key), or null.</summary>
    public LruHandle? Insert(LruHandle h)
    {
        ref LruHandle? slot = ref FindSlot(h.Key);
        LruHandle? old = slot;
        h.NextHash = old?.NextHash;
        slot = h;
        if (old == null)
        {
            if (++_count > _buckets.Length)
            {
                Grow();
            }
        }
        else
        {
            old.NextHash = null;
        }
        return old;
    }

    /// <summary>Takes out and returns the entry of <paramref name="key"/>, or null.</summary>
    public LruHandle? Remove(in CacheKey key)
    {
        ref LruHandle? slot = ref FindSlot(key);
        LruHandle? h = slot;
        if (h != null)
        {
            slot = h.NextHash;
            h.NextHash = null;
            _count--;
        }
        return h;
    }

    /// <summary>Visits every entry (no change to the table meanwhile).</summary>
    public Enumerator GetEnumerator() => new(_buckets);

    /// <summary>The link that points at <paramref name="key"/>'s entry, or the null link ending its chain.</summary>
    private ref LruHandle? FindSlot(in CacheKey key)
    {
        ref LruHandle? slot = ref _buckets[(int)key.Hash & (_buckets.Length - 1)];
        while (slot != null && !slot.Key.Equals(key))
        {
            slot = ref slot.NextHash;
        }
        return ref slot;
    }

    private void Grow()
    {
        var grown = new LruHandle?[_buckets.Length * 2];
        int mask = grown.Length - 1;
        foreach (LruHandle? head in _buckets)
        {
            LruHandle? h = head;
            while (h != null)
            {
                LruHandle? next = h.NextHash;
                ref LruHandle? bucket = ref grown[(int)h.Key.Hash & mask];
                h.NextHash = bucket;
                bucket = h;
                h = next;
            }
        }
        _buckets = grown;
    }

    /// <summary>Walks the buckets and their chains.</summary>
    public struct Enumerator
    {
        private readonly LruHandle?[] _buckets;
        private int _bucket;
        private LruHandle? _current;

        internal Enumerator(LruHandle?[] buckets)
        {
            _buckets = buckets;
            _bucket = -1;
            _current = null;
        }

        public readonly LruHandle Current => _current!;

        public bool MoveNext()
        {
            _current = _current?.NextHash;
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
