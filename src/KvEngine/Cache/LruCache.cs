using System.Runtime.InteropServices;
using KvEngine.Memory;

namespace KvEngine.Cache;

/// <summary>
/// A sharded LRU cache of ref-counted <see cref="CacheValue"/>s (RocksDB's LRUCache): the top bits
/// of a key's hash pick one of 2^bits <see cref="LruCacheShard"/>s, each with its own lock and an
/// even share of the capacity. A charge is the value's usable (allocated) size plus
/// <see cref="LruCacheOptions.EntryOverheadBytes"/>. Entries evicted for room are offered to the
/// optional <see cref="ISecondaryCache"/> and then freed; a primary miss that the secondary can
/// answer is promoted (rebuilt by the caller's <see cref="ICacheValueFactory"/> and inserted).
/// <para>
/// Entries are native <see cref="LruEntry"/> records from <see cref="LruCacheOptions.Allocator"/>.
/// A native block inserted with <see cref="TryInsertBlock"/> lives in its entry (the entry owns its
/// bytes; no managed object: readers see it through a pooled view, the table's block type); other
/// values are held through a GC handle until freed.
/// </para>
/// <para>
/// Thread-safe. Lookups that hit take one shard lock briefly and allocate nothing. Every handle
/// returned must be released once with <see cref="Release"/>; values are freed outside the locks.
/// </para>
/// </summary>
internal sealed unsafe class LruCache : IDisposable
{
    private readonly LruCacheShard[] _shards;
    private readonly int _shift;
    private readonly long _overhead;
    private readonly ISecondaryCache? _secondary;
    private readonly NativeAllocator _allocator;
    private readonly INativeValueOwner? _nativeValues;
    private readonly int _entryBytes; // an LruEntry, and with debug checks the allocator tags of the entry and its block after it

    // The page size an entry in a block's tail must share with the block's last byte (4 KiB: the
    // smallest page, so the rule holds on any).
    private const int PageBytes = 4096;
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
        _allocator = options.Allocator;
        _nativeValues = options.NativeValues;
        _entryBytes = sizeof(LruEntry) + (_allocator.DebugChecks ? 2 * sizeof(long) : 0);
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
            LruEntry* freed = null;
            s.SetCapacity(perShard, ref freed);
            FreeChain(freed);
        }
    }

    /// <summary>The charge an entry holding <paramref name="value"/> gets.</summary>
    public long ChargeOf(CacheValue value) => value.AllocatedBytes + _overhead;

    /// <summary>Looks up <paramref name="key"/> in this tier only; null on a miss.</summary>
    public LruHandle? Lookup(in CacheKey key)
    {
        LruEntry* e = ShardOf(key).Lookup(key);
        return e == null ? null : new LruHandle(e);
    }

    /// <summary>
    /// Looks up <paramref name="key"/>; on a miss asks the secondary tier and, when it has the
    /// bytes, rebuilds the value with <paramref name="factory"/> and inserts it (returned
    /// referenced; <paramref name="promoted"/> says so). Null on a miss in both.
    /// </summary>
    public LruHandle? Lookup(in CacheKey key, ICacheValueFactory? factory, CachePriority priority, KvStatistics? stats, out bool promoted)
    {
        promoted = false;
        LruHandle? h = Lookup(key);
        if (h != null || _secondary == null || factory == null)
        {
            return h;
        }
        if (!_secondary.TryPromote(key, out NativeBuffer contents, out CacheEntryRole role, stats))
        {
            return null;
        }
        CacheValue value = factory.Create(contents, key, role);
        if (TryInsertBlock(key, value, priority, out h))
        {
            if (value.IsView)
            {
                value.Free(); // the entry holds the bytes; the caller reads them through the handle
            }
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
        LruEntry* e = NewManagedEntry(key, value, priority);
        bool ok = Publish(key, e, wantHandle: true); // refused: the caller keeps the value
        handle = ok ? new LruHandle(e) : null;
        return ok;
    }

    /// <summary>
    /// <see cref="TryInsert"/> for a value that may be a native block. When
    /// <see cref="CacheValue.TryGetNativeBlock"/> gives a buffer from this cache's allocator, the
    /// entry takes the buffer (no managed object stays in the cache) and <paramref name="block"/> becomes a view of it (<see cref="CacheValue.IsView"/>),
    /// valid while the returned handle is held: the caller frees the view (which frees no bytes)
    /// when it releases the handle, as the table's block lease does. Otherwise the entry keeps the
    /// value object, as <see cref="TryInsert"/> would. False (strict capacity, no room): the caller
    /// keeps the value, unchanged.
    /// </summary>
    public bool TryInsertBlock(in CacheKey key, CacheValue block, CachePriority priority, out LruHandle? handle)
    {
        if (!block.TryGetNativeBlock(_allocator, out NativeBuffer buffer))
        {
            return TryInsert(key, block, priority, out handle);
        }
        // The entry takes the tail of the block's own allocation when its size class leaves room
        // (a 3,995-byte data block in the 4,096-byte class has 101 bytes spare): one allocation per
        // cached block instead of two, 64 bytes fewer. Its charge stays the value's usable bytes
        // (less the entry's) plus the per-entry overhead, which counts the entry. Only on the page
        // of the block's last byte: a tail on a page of its own (a large class's) would make that
        // page resident for 64 bytes.
        byte* tail = (byte*)buffer.Pointer + buffer.UsableSize - _entryBytes;
        LruEntry* e = buffer.UsableSize - buffer.Length >= _entryBytes
            && ((nuint)(tail + _entryBytes - 1) / PageBytes) == ((nuint)((byte*)buffer.Pointer + buffer.Length - 1) / PageBytes)
            ? NewEntry(key, buffer.UsableSize - _entryBytes, block.Role, priority, tail)
            : NewEntry(key, buffer.UsableSize, block.Role, priority);
        e->Value = (nint)buffer.Pointer;
        e->Length = buffer.Length;
        e->DataUse = (byte)buffer.Tag; // the low byte of a tag is the use
        if (_allocator.DebugChecks)
        {
            DebugTags(e)[1] = buffer.Tag;
        }
        e->Flags |= LruEntryFlags.NativeBlock;
        bool ok = Publish(key, e, wantHandle: true); // refused: the block keeps its buffer
        if (ok)
        {
            block.BecomeView(); // the entry owns the buffer now; it is referenced, so nothing frees it meanwhile
        }
        handle = ok ? new LruHandle(e) : null;
        return ok;
    }

    /// <summary>Inserts without a handle; the cache owns <paramref name="value"/> from now on (it may be freed at once when it does not fit).</summary>
    public void Insert(in CacheKey key, CacheValue value, CachePriority priority)
    {
        Publish(key, NewManagedEntry(key, value, priority), wantHandle: false);
    }

    /// <summary>
    /// Inserts a native record (see <see cref="INativeValueOwner"/>) without a handle; the cache owns
    /// it from now on and has <see cref="LruCacheOptions.NativeValues"/> free it (at once when it
    /// does not fit).
    /// </summary>
    public void InsertNative(in CacheKey key, nint value, CacheEntryRole role, CachePriority priority)
    {
        if (_nativeValues == null)
        {
            throw new InvalidOperationException("This cache has no owner for native values.");
        }
        LruEntry* e = NewEntry(key, *(int*)(value + 4), role, priority); // charged its allocated bytes
        e->Value = value;
        e->Flags |= LruEntryFlags.NativeValue;
        Publish(key, e, wantHandle: false);
    }

    public void Release(LruHandle handle)
    {
        LruEntry* freed = null;
        ShardOf(handle.Key).Release(handle.Entry, ref freed);
        FreeChain(freed);
    }

    public void Erase(in CacheKey key)
    {
        LruEntry* freed = null;
        ShardOf(key).Erase(key, ref freed);
        FreeChain(freed);
    }

    /// <summary>Frees every unreferenced entry (nothing is demoted).</summary>
    public void EraseUnreferenced()
    {
        foreach (LruCacheShard s in _shards)
        {
            LruEntry* freed = null;
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

    /// <summary>
    /// Inserts the new entry <paramref name="e"/> into its shard, then frees what that evicted. Only
    /// a strict cache refuses an entry, and only one that wants a handle: then the entry is freed
    /// here without its value (never published: its value stays the caller's) and false returned.
    /// </summary>
    private bool Publish(in CacheKey key, LruEntry* e, bool wantHandle)
    {
        LruEntry* freed = null;
        bool ok = ShardOf(key).Insert(e, wantHandle, ref freed);
        if (!ok)
        {
            FreeEntry(e, freeValue: false);
        }
        FreeChain(freed);
        return ok;
    }

    private LruCacheShard ShardOf(in CacheKey key) => _shards.Length == 1 ? _shards[0] : _shards[(int)(key.Hash >> _shift)];

    /// <summary>
    /// A new entry for <paramref name="key"/>, unreferenced and outside any shard, with no value yet:
    /// an allocation of its own, or the <see cref="_entryBytes"/> at <paramref name="inBlock"/> (the
    /// tail of the native block it will hold, <see cref="LruEntryFlags.InBlock"/>).
    /// </summary>
    private LruEntry* NewEntry(in CacheKey key, long valueBytes, CacheEntryRole role, CachePriority priority, byte* inBlock = null)
    {
        long charge = valueBytes + _overhead;
        if (charge > int.MaxValue)
        {
            throw new ArgumentOutOfRangeException(nameof(valueBytes), valueBytes, "A cache entry's charge must stay below 2 GiB.");
        }
        LruEntry* e;
        if (inBlock != null)
        {
            e = (LruEntry*)inBlock;
            *e = default;
            e->Flags = LruEntryFlags.InBlock;
        }
        else
        {
            NativeBuffer memory = _allocator.Allocate(_entryBytes, use: NativeUse.CacheEntry);
            e = (LruEntry*)memory.Pointer;
            *e = default;
            if (_allocator.DebugChecks)
            {
                DebugTags(e)[0] = memory.Tag;
            }
        }
        e->OwnerId = key.OwnerId;
        e->Offset = key.Offset;
        e->Charge = (int)charge;
        e->Role = (byte)role;
        e->Set(LruEntryFlags.HighPriority, priority == CachePriority.High);
        return e;
    }

    /// <summary>A new entry holding <paramref name="value"/> through a GC handle (none for the placeholder).</summary>
    private LruEntry* NewManagedEntry(in CacheKey key, CacheValue value, CachePriority priority)
    {
        LruEntry* e = NewEntry(key, value.AllocatedBytes, value.Role, priority);
        if (value is not CachePlaceholder)
        {
            e->Value = GCHandle.ToIntPtr(GCHandle.Alloc(value));
        }
        return e;
    }

    /// <summary>Frees <paramref name="e"/> (and, with <paramref name="freeValue"/>, its value): its one owner is the caller.</summary>
    private void FreeEntry(LruEntry* e, bool freeValue)
    {
        CacheValue? managed = null;
        bool debug = _allocator.DebugChecks;
        if (e->Has(LruEntryFlags.NativeBlock))
        {
            NativeBuffer block = freeValue
                ? new NativeBuffer(_allocator, (byte*)e->Value, e->Length, SizeClasses.UsableSize(e->Length), debug ? DebugTags(e)[1] : e->DataUse)
                : default;
            if (!e->Has(LruEntryFlags.InBlock))
            {
                FreeEntryMemory(e, debug);
            }
            // An entry in the block's tail goes with the block (a refused one stays in the block
            // its caller keeps): nothing reads it after this.
            block.Dispose();
            return;
        }
        if (e->Has(LruEntryFlags.NativeValue))
        {
            if (freeValue)
            {
                _nativeValues!.FreeNativeValue(e->Value);
            }
        }
        else if (e->Value != 0)
        {
            GCHandle gc = GCHandle.FromIntPtr(e->Value);
            managed = (CacheValue)gc.Target!;
            gc.Free();
        }
        FreeEntryMemory(e, debug);
        if (freeValue)
        {
            managed?.Free();
        }
    }

    /// <summary>Frees an entry's own allocation (not one in its block's tail).</summary>
    private void FreeEntryMemory(LruEntry* e, bool debug)
    {
        long entryTag = debug ? DebugTags(e)[0] : (long)NativeUse.CacheEntry;
        new NativeBuffer(_allocator, (byte*)e, _entryBytes, SizeClasses.UsableSize(_entryBytes), entryTag).Dispose();
    }

    /// <summary>The allocator tags of an entry and its native block, after the entry (only with debug checks).</summary>
    private static long* DebugTags(LruEntry* e) => (long*)(e + 1);

    /// <summary>
    /// Demotes (when asked) and frees the values of detached entries, then the entries: a detached
    /// entry is out of its shard's table and lists with no references, so this chain is its only
    /// owner.
    /// </summary>
    private void FreeChain(LruEntry* e)
    {
        while (e != null)
        {
            LruEntry* next = e->Next;
            e->Next = null;
            try
            {
                if (e->Has(LruEntryFlags.Demote) && _secondary != null && Volatile.Read(ref _disposed) == 0)
                {
                    var h = new LruHandle(e);
                    if (h.IsNativeBlock)
                    {
                        _secondary.Demote(h.Key, new ReadOnlySpan<byte>(h.BlockData, e->Length), h.Role);
                    }
                    else if (!h.IsNativeValue && h.Value is { CanDemote: true } value)
                    {
                        _secondary.Demote(h.Key, value.Contents, value.Role);
                    }
                }
            }
            finally
            {
                FreeEntry(e, freeValue: true);
            }
            e = next;
        }
    }
}
