using KvEngine.Util;

namespace KvEngine.Cache;

/// <summary>
/// A sharded LRU cache of ref-counted <see cref="CacheValue"/>s (RocksDB's LRUCache): the top bits
/// of a key's hash pick one of 2^bits <see cref="LruCacheShard"/>s, each with its own lock and an
/// even share of the capacity. A charge is the value's usable (allocated) size plus
/// <see cref="LruCacheOptions.EntryOverheadBytes"/>. Entries evicted for room are offered to the
/// optional <see cref="ISecondaryCache"/> and then freed; a primary miss that the secondary can
/// answer is promoted (rebuilt by the caller's <see cref="ICacheValueFactory"/> and inserted).
/// <para>
/// Thread-safe. Lookups that hit take one shard lock briefly and allocate nothing. Every handle
/// returned must be released once with <see cref="Release"/>; values are freed outside the locks.
/// </para>
/// </summary>
internal sealed class LruCache : IDisposable
{
    private readonly LruCacheShard[] _shards;
    private readonly int _shift;
    private readonly long _overhead;
    private readonly ISecondaryCache? _secondary;
    private long _nextId;
    private long _capacity;
    private int _disposed;

    public LruCache(LruCacheOptions options, ISecondaryCache? secondary = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        int bits = options.NumShardBits >= 0 ? options.NumShardBits : LruCacheOptions.DefaultShardBits(options.Capacity, options.MinShardBytes);
        NumShardBits = bits;
        _shards = new LruCacheShard[1 << bits];
        _shift = 64 - bits;
        _overhead = options.EntryOverheadBytes;
        _secondary = secondary;
        _capacity = options.Capacity;
        long perShard = (options.Capacity + _shards.Length - 1) / _shards.Length;
        for (int i = 0; i < _shards.Length; i++)
        {
            _shards[i] = new LruCacheShard(perShard, options.StrictCapacity, options.HighPriPoolRatio);
        }
    }

    public int NumShardBits { get; }

    public long Capacity => Volatile.Read(ref _capacity);

    public long EntryOverheadBytes => _overhead;

    public ISecondaryCache? Secondary => _secondary;

    public long Usage
    {
        get
        {
            long sum = 0;
            foreach (LruCacheShard s in _shards)
            {
                sum += s.Usage;
            }
            return sum;
        }
    }

    public long PinnedUsage
    {
        get
        {
            long sum = 0;
            foreach (LruCacheShard s in _shards)
            {
                sum += s.PinnedUsage;
            }
            return sum;
        }
    }

    /// <summary>Requested vs allocated (usable) bytes of the values held, overhead excluded.</summary>
    public (long Requested, long Allocated) ValueBytes
    {
        get
        {
            long r = 0, a = 0;
            foreach (LruCacheShard s in _shards)
            {
                (long sr, long sa) = s.ValueBytes;
                r += sr;
                a += sa;
            }
            return (r, a);
        }
    }

    public int Count
    {
        get
        {
            int n = 0;
            foreach (LruCacheShard s in _shards)
            {
                n += s.Count;
            }
            return n;
        }
    }

    /// <summary>
    /// Entries and charged bytes per <see cref="CacheEntryRole"/> (slots indexed by the role), each
    /// shard read under its lock in turn (a consistent picture per shard, not across shards).
    /// </summary>
    public void CollectRoleStats(Span<long> counts, Span<long> charges)
    {
        counts.Clear();
        charges.Clear();
        foreach (LruCacheShard s in _shards)
        {
            s.AddRoleStats(counts, charges);
        }
    }

    /// <summary>The per-shard capacity bound: usage stays within it except for referenced entries.</summary>
    public long ShardCapacity => _shards[0].Capacity;

    /// <summary>A new id to prefix the keys of one table reader (RocksDB's Cache::NewId).</summary>
    public ulong NewId() => (ulong)Interlocked.Increment(ref _nextId);

    public void SetCapacity(long capacity)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(capacity);
        Volatile.Write(ref _capacity, capacity);
        long perShard = (capacity + _shards.Length - 1) / _shards.Length;
        foreach (LruCacheShard s in _shards)
        {
            LruHandle? freed = null;
            s.SetCapacity(perShard, ref freed);
            FreeChain(freed);
        }
    }

    /// <summary>The charge an entry holding <paramref name="value"/> gets.</summary>
    public long ChargeOf(CacheValue value) => value.AllocatedBytes + _overhead;

    /// <summary>Looks up <paramref name="key"/> in this tier only; null on a miss.</summary>
    public LruHandle? Lookup(in CacheKey key) => ShardOf(key).Lookup(key);

    /// <summary>
    /// Looks up <paramref name="key"/>; on a miss asks the secondary tier and, when it has the
    /// bytes, rebuilds the value with <paramref name="factory"/> and inserts it (returned
    /// referenced; <paramref name="promoted"/> says so). Null on a miss in both.
    /// </summary>
    public LruHandle? Lookup(in CacheKey key, ICacheValueFactory? factory, CachePriority priority, KvStatistics? stats, out bool promoted)
    {
        promoted = false;
        LruHandle? h = ShardOf(key).Lookup(key);
        if (h != null || _secondary == null || factory == null)
        {
            return h;
        }
        if (!_secondary.TryPromote(key, out Memory.NativeBuffer contents, out CacheEntryRole role, stats))
        {
            return null;
        }
        CacheValue value = factory.Create(contents, key, role);
        if (TryInsert(key, value, priority, out h))
        {
            promoted = true;
            return h;
        }
        value.Free(); // strict capacity refused it: the block is lost from both tiers, as in RocksDB
        return null;
    }

    /// <summary>
    /// Inserts and returns the entry referenced. False (strict capacity, no room): the caller
    /// keeps <paramref name="value"/>.
    /// </summary>
    public bool TryInsert(in CacheKey key, CacheValue value, CachePriority priority, out LruHandle? handle)
    {
        LruHandle h = NewHandle(key, value, priority);
        LruHandle? freed = null;
        bool ok = ShardOf(key).Insert(h, wantHandle: true, ref freed);
        FreeChain(freed);
        if (!ok)
        {
            Recycle(h); // never published: no one else saw it
        }
        handle = ok ? h : null;
        return ok;
    }

    /// <summary>Inserts without a handle; the cache owns <paramref name="value"/> from now on (it may be freed at once when it does not fit).</summary>
    public void Insert(in CacheKey key, CacheValue value, CachePriority priority)
    {
        LruHandle h = NewHandle(key, value, priority);
        LruHandle? freed = null;
        ShardOf(key).Insert(h, wantHandle: false, ref freed);
        FreeChain(freed);
    }

    public void Release(LruHandle handle)
    {
        LruHandle? freed = null;
        ShardOf(handle.Key).Release(handle, ref freed);
        FreeChain(freed);
    }

    public void Erase(in CacheKey key)
    {
        LruHandle? freed = null;
        ShardOf(key).Erase(key, ref freed);
        FreeChain(freed);
    }

    /// <summary>Frees every unreferenced entry (nothing is demoted).</summary>
    public void EraseUnreferenced()
    {
        foreach (LruCacheShard s in _shards)
        {
            LruHandle? freed = null;
            s.EraseUnreferenced(demote: false, ref freed);
            FreeChain(freed);
        }
    }

    /// <summary>Frees every unreferenced entry; entries still referenced are freed at their release.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            EraseUnreferenced();
        }
    }

    private LruCacheShard ShardOf(in CacheKey key) => _shards.Length == 1 ? _shards[0] : _shards[(int)(key.Hash >> _shift)];

    /// <summary>A blank handle (recycled when this thread has one) made the entry for <paramref name="value"/>.</summary>
    private LruHandle NewHandle(in CacheKey key, CacheValue value, CachePriority priority)
    {
        LruHandle h = ThreadLocalPool<LruHandle>.TryRent() ?? new LruHandle();
        h.Init(key, value, ChargeOf(value), priority == CachePriority.High);
        return h;
    }

    private static void Recycle(LruHandle h)
    {
        h.Clear();
        ThreadLocalPool<LruHandle>.Return(h);
    }

    /// <summary>
    /// Demotes (when asked) and frees the values of detached entries, then recycles their handles:
    /// a detached entry is out of its shard's table and lists with no references, so this chain is
    /// its only owner.
    /// </summary>
    private void FreeChain(LruHandle? h)
    {
        while (h != null)
        {
            LruHandle? next = h.Next;
            h.Next = null;
            try
            {
                if (h.Demote && _secondary != null && h.Value.CanDemote && Volatile.Read(ref _disposed) == 0)
                {
                    _secondary.Demote(h.Key, h.Value);
                }
            }
            finally
            {
                h.Value.Free();
            }
            Recycle(h);
            h = next;
        }
    }
}
