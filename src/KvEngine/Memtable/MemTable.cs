using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.RangeDel;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Memtable;

/// <summary>
/// The in-memory write buffer: point entries (Value, Deletion, SingleDeletion, Merge) in one
/// <see cref="SkipList"/> and range tombstones (RangeDeletion: user key = range start, value = range
/// end) in a second one, both in one native <see cref="Arena"/> that the memtable owns.
/// <para>
/// Lifetime: reference counted. The creator holds the first reference and drops it with
/// <see cref="Dispose"/> (idempotent) or <see cref="Unref"/>; every other holder takes one with
/// <see cref="Ref"/> and drops it with <see cref="Unref"/>; iterators hold one until disposed. When the
/// count reaches zero the arena is freed, exactly once; after that <see cref="Ref"/> throws
/// ObjectDisposedException and an extra <see cref="Unref"/> throws InvalidOperationException. Spans
/// returned by <see cref="TryGet(ReadOnlySpan{byte}, ulong, out ValueType, out ReadOnlySpan{byte})"/> and by iterators point into the arena: valid while a reference is held.
/// </para>
/// <para>
/// Thread-safety: writers (Add) must be serialized by the caller, or all add with concurrent: true
/// in a phase that <see cref="EndConcurrentWrites"/> closes; any number of
/// readers (<see cref="TryGet(ReadOnlySpan{byte}, ulong, out ValueType, out ReadOnlySpan{byte})"/>, iterators, the counters) run concurrently with the writer and with
/// each other without locking (see <see cref="SkipList"/>). Ref/Unref are thread-safe.
/// </para>
/// <para>
/// Point lookups: with a <see cref="MemTableHashIndex"/> (MemTableOptions.HashIndexBuckets) a lookup
/// finds its key's newest entry through the index and walks to the version its sequence sees at
/// level 0, falling back to the skip-list search past <see cref="MaxVersionWalk"/> versions; without
/// one it searches the skip list. Both give the same entry.
/// </para>
/// <para>
/// Range tombstones: every RangeDeletion add swaps in a new empty <see cref="RangeTombstoneCache"/>
/// after the insert; <see cref="GetRangeTombstones"/> returns the fragmented list, built once by the
/// first reader after the swap (see the cache for why readers racing a swap stay correct). An
/// immutable memtable builds its list once and keeps it.
/// </para>
/// </summary>
internal sealed unsafe class MemTable : IDisposable
{
    /// <summary>Lookup keys up to this size are built on the stack; longer ones in a pooled array.</summary>
    private const int StackLookupKeyLimit = 256;

    /// <summary>Newer versions of a key a lookup steps over from the index before it searches the skip list instead.</summary>
    internal const int MaxVersionWalk = 8;

    private readonly Arena _arena;
    private readonly SkipList _table;
    private readonly SkipList _rangeDeletions;
    private readonly MemTableHashIndex? _index;

    private RangeTombstoneCache _rangeTombstoneCache = new();
    private int _refs = 1;
    private int _disposed;

    // Written by the writer with volatile stores, read by anyone.
    private long _numEntries;
    private long _numDeletes;
    private long _numRangeDeletes;
    private long _distinctUserKeys;
    private ulong _firstSequence;

    public MemTable()
        : this(MemTableOptions.Default)
    {
    }

    public MemTable(int arenaBlockSize)
        : this(MemTableOptions.Default with { ArenaBlockSize = arenaBlockSize })
    {
    }

    public MemTable(MemTableOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        _arena = new Arena(options.ArenaBlockSize, hugePages: options.HugePages, recycler: options.Recycler);
        try
        {
            // Link words only for the hash index's chains (without them height-1 nodes, three in four, are 4 bytes smaller).
            _table = new SkipList(_arena, options.MaxHeight, options.Branching, options.RandomSeed, linkWords: options.HashIndexBuckets != 0);
            _rangeDeletions = new SkipList(_arena, options.MaxHeight, options.Branching, options.RandomSeed + 1, linkWords: false);
            if (options.HashIndexBuckets != 0)
            {
                _index = new MemTableHashIndex(_arena, options.HashIndexBuckets);
            }
        }
        catch
        {
            _arena.Dispose();
            throw;
        }
    }

    /// <summary>Arena bytes in use, including block-table overhead and waste; never decreases. Any thread.</summary>
    public long ApproximateMemoryUsage => _arena.MemoryUsage;

    /// <summary>Bytes of the arena's blocks (RocksDB's MemoryAllocatedBytes), used or not. Any thread.</summary>
    public long AllocatedBytes => _arena.AllocatedBytes;

    /// <summary>
    /// True when the memtable should take no more writes, by RocksDB's MemTable::ShouldFlushNow over
    /// the arena's blocks (B bytes each, W = <paramref name="writeBufferSize"/>): not while one more
    /// block keeps the blocks within W + 0.6 B; at once past W + 0.6 B; in between, once the current
    /// block is three-quarters used. So a full memtable's blocks, all resident, end within about
    /// half a block of W, where a rule over the bytes used (at least W) would start a block for a
    /// few entries first: with 2 MiB huge-page blocks, up to 2 MiB more resident for every memtable
    /// that waits for its flush. Also true once the arena has used half of its 32-bit ids
    /// (<see cref="Arena.IdsMostlyUsed"/>: about 8 GiB of entries, whatever the write buffer size).
    /// Any thread (from another than the writer's, an estimate).
    /// </summary>
    public bool IsFull(long writeBufferSize)
    {
        long allocated = AllocatedBytes;
        long block = _arena.BlockSize;
        long limit = writeBufferSize + (block * 3 / 5); // RocksDB's kAllowOverAllocationRatio 0.6
        bool full = allocated + block >= limit && (allocated > limit || _arena.CurrentBlockFree < block / 4);
        return full || _arena.IdsMostlyUsed;
    }

    /// <summary>Entries added, range tombstones included.</summary>
    public long NumEntries => Volatile.Read(ref _numEntries);

    /// <summary>Deletion and SingleDeletion entries added.</summary>
    public long NumDeletes => Volatile.Read(ref _numDeletes);

    /// <summary>RangeDeletion entries added.</summary>
    public long NumRangeDeletes => Volatile.Read(ref _numRangeDeletes);

    /// <summary>
    /// User keys among the point entries, counted at insert (an entry whose skip-list neighbour
    /// already had its user key does not count): exact for a single writer adding in sequence
    /// order, never low otherwise. A flush sizes its filter by it instead of buffering a hash per
    /// key (<see cref="Table.TableBuilder.ExpectKeys"/>).
    /// </summary>
    public long DistinctUserKeys => Volatile.Read(ref _distinctUserKeys);

    /// <summary>
    /// Every write of the memtable's family with a sequence number at least this one is in this
    /// memtable or a newer one (RocksDB's earliest_seqno): set when the memtable is switched in (the
    /// next sequence to be given) or recovered; 0 for a family's first memtable. An optimistic
    /// transaction's conflict check can decide only from this point on.
    /// </summary>
    public ulong EarliestSequence { get; set; }

    /// <summary>The sequence number of the first entry added; 0 while empty.</summary>
    public ulong FirstSequence => Volatile.Read(ref _firstSequence);

    public bool IsEmpty => NumEntries == 0;

    /// <summary>True when point lookups go through a hash index.</summary>
    public bool HasHashIndex => _index != null;

    /// <summary>Current reference count (diagnostics and tests).</summary>
    public int RefCount => Volatile.Read(ref _refs);

    /// <summary>
    /// Writer: adds an entry. Point types go to the point table; RangeDeletion (userKey = start,
    /// value = end) to the range-tombstone table. False, and nothing added, when an entry with the
    /// same user key, sequence and type is already present. Allocation-free.
    /// </summary>
    public bool Add(ulong sequence, ValueType type, ReadOnlySpan<byte> userKey, ReadOnlySpan<byte> value) =>
        Add(sequence, type, userKey, value, concurrent: false);

    /// <summary>
    /// <see cref="Add(ulong, ValueType, ReadOnlySpan{byte}, ReadOnlySpan{byte})"/>; with
    /// <paramref name="concurrent"/> any number of writers may add at once (RocksDB's
    /// allow_concurrent_memtable_write), a phase that <see cref="EndConcurrentWrites"/> closes
    /// before the next single-writer add.
    /// </summary>
    public bool Add(ulong sequence, ValueType type, ReadOnlySpan<byte> userKey, ReadOnlySpan<byte> value, bool concurrent)
    {
        ThrowIfFreed();
        if (sequence > InternalKeys.MaxSequenceNumber)
        {
            ThrowSequenceOutOfRange(sequence);
        }
        SkipList list = type switch
        {
            ValueType.Value or ValueType.Deletion or ValueType.SingleDeletion or ValueType.Merge => _table,
            ValueType.RangeDeletion => _rangeDeletions,
            _ => ThrowBadType(type),
        };
        if (!MemTableEntry.TryGetEncodedSize(userKey.Length, value.Length, out int size))
        {
            ThrowTooLarge(userKey.Length, value.Length);
        }

        MemTableHashIndex? index = type == ValueType.RangeDeletion ? null : _index;
        ulong hash = 0;
        if (index != null)
        {
            hash = MemTableHashIndex.Hash(userKey);
            index.Prefetch(hash); // loads while the skip list is searched
        }
        uint node;
        byte* entry = concurrent ? list.AllocateEntryConcurrently(size, out node) : list.AllocateEntry(size, out node);
        MemTableEntry.Encode(entry, userKey, InternalKeys.PackTrailer(sequence, type), value);
        bool sharesUserKey;
        if (!(concurrent ? list.InsertConcurrently(node, out sharesUserKey) : list.Insert(node, out sharesUserKey)))
        {
            return false;
        }
        bool newUserKey = !sharesUserKey && type != ValueType.RangeDeletion;
        if (index != null)
        {
            if (concurrent)
            {
                index.AddConcurrently(node, hash);
            }
            else
            {
                index.Add(node, hash);
            }
        }
        if (concurrent)
        {
            CountConcurrently(sequence, type, newUserKey);
            if (type == ValueType.RangeDeletion)
            {
                Volatile.Write(ref _rangeTombstoneCache, new RangeTombstoneCache());
            }
            return true;
        }

        if (_numEntries == 0)
        {
            Volatile.Write(ref _firstSequence, sequence);
        }
        Volatile.Write(ref _numEntries, _numEntries + 1);
        if (newUserKey)
        {
            Volatile.Write(ref _distinctUserKeys, _distinctUserKeys + 1);
        }
        if (type is ValueType.Deletion or ValueType.SingleDeletion)
        {
            Volatile.Write(ref _numDeletes, _numDeletes + 1);
        }
        else if (type == ValueType.RangeDeletion)
        {
            Volatile.Write(ref _numRangeDeletes, _numRangeDeletes + 1);
            Volatile.Write(ref _rangeTombstoneCache, new RangeTombstoneCache());
        }
        return true;
    }

    /// <summary>
    /// The fragmented range tombstones, or null when there are none. Built at most once per
    /// DeleteRange, by the first reader; allocation-free after that. Take the read sequence before
    /// calling this (see <see cref="RangeTombstoneCache"/>).
    /// </summary>
    public FragmentedRangeTombstoneList? GetRangeTombstones()
    {
        if (NumRangeDeletes == 0)
        {
            return null;
        }
        return Volatile.Read(ref _rangeTombstoneCache).Get(this);
    }

    /// <summary>Closes a phase of concurrent adds: called once, after every one of them returned.</summary>
    public void EndConcurrentWrites()
    {
        _table.EndConcurrentInserts();
        _rangeDeletions.EndConcurrentInserts();
    }

    private void CountConcurrently(ulong sequence, ValueType type, bool newUserKey)
    {
        Interlocked.Increment(ref _numEntries);
        if (newUserKey)
        {
            Interlocked.Increment(ref _distinctUserKeys);
        }
        ulong first = Volatile.Read(ref _firstSequence);
        while (first == 0 || sequence < first)
        {
            ulong seen = Interlocked.CompareExchange(ref _firstSequence, sequence, first);
            if (seen == first)
            {
                break;
            }
            first = seen;
        }
        if (type is ValueType.Deletion or ValueType.SingleDeletion)
        {
            Interlocked.Increment(ref _numDeletes);
        }
        else if (type == ValueType.RangeDeletion)
        {
            Interlocked.Increment(ref _numRangeDeletes);
        }
    }

    /// <summary>
    /// Finds the newest point entry for <paramref name="userKey"/> with sequence &lt;=
    /// <paramref name="sequence"/>: its type and value (a span into the arena). Range tombstones are
    /// not consulted. Allocation-free.
    /// </summary>
    public bool TryGet(ReadOnlySpan<byte> userKey, ulong sequence, out ValueType type, out ReadOnlySpan<byte> value) =>
        TryGet(userKey, sequence, out type, out value, out _);

    /// <summary>
    /// <see cref="TryGet(ReadOnlySpan{byte}, ulong, out ValueType, out ReadOnlySpan{byte})"/>, also
    /// giving the entry's sequence number (to compare with covering range tombstones).
    /// </summary>
    public bool TryGet(ReadOnlySpan<byte> userKey, ulong sequence, out ValueType type, out ReadOnlySpan<byte> value, out ulong entrySequence)
    {
        SkipList.Iterator it = SeekVersions(userKey, sequence);
        if (it.Valid)
        {
            MemTableEntry.Decode(it.Entry, out ReadOnlySpan<byte> internalKey, out ReadOnlySpan<byte> entryValue);
            if (InternalKeys.UserKey(internalKey).SequenceEqual(userKey))
            {
                type = InternalKeys.Type(internalKey);
                entrySequence = InternalKeys.Sequence(internalKey);
                value = entryValue;
                return true;
            }
        }
        type = default;
        value = default;
        entrySequence = 0;
        return false;
    }

    /// <summary>
    /// A cursor at the newest point entry of <paramref name="userKey"/> with sequence &lt;=
    /// <paramref name="sequence"/> (or at the next key's first entry, or not Valid): the caller walks
    /// the key's older entries with Next while the user key matches (merge operand lookups).
    /// Allocation-free; valid while a reference is held.
    /// </summary>
    internal SkipList.Iterator SeekVersions(ReadOnlySpan<byte> userKey, ulong sequence)
    {
        ThrowIfFreed();
        if (sequence > InternalKeys.MaxSequenceNumber)
        {
            ThrowSequenceOutOfRange(sequence);
        }
        if (userKey.Length > Array.MaxLength - InternalKeys.TrailerSize)
        {
            ThrowTooLarge(userKey.Length, 0);
        }
        if (_index != null)
        {
            if (NumEntries == 0)
            {
                return new SkipList.Iterator(_table); // not Valid; spares the bucket's cache miss (a fresh memtable)
            }
            if (TrySeekThroughIndex(_index, userKey, sequence, out SkipList.Iterator found))
            {
                return found;
            }
        }
        return SeekInList(userKey, sequence);
    }

    // The index's newest entry of the key, then older ones at level 0 until one the sequence sees.
    // False when more than MaxVersionWalk newer versions are in the way (a long history, an old
    // snapshot) or the key's chain is too long to walk.
    private bool TrySeekThroughIndex(MemTableHashIndex index, ReadOnlySpan<byte> userKey, ulong sequence, out SkipList.Iterator it)
    {
        it = new SkipList.Iterator(_table);
        if (!index.TryFindNewest(userKey, MemTableHashIndex.Hash(userKey), out byte* newest))
        {
            return false; // a chain too long to walk: search the skip list
        }
        if (newest == null)
        {
            return true; // not Valid: the memtable has no entry of the key
        }
        it.SeekToEntry(newest);
        for (int skipped = 0; skipped <= MaxVersionWalk; skipped++)
        {
            if (InternalKeys.Sequence(it.Key) <= sequence)
            {
                return true;
            }
            it.Next();
            if (!it.Valid || !InternalKeys.UserKey(it.Key).SequenceEqual(userKey))
            {
                return true; // every entry of the key is newer than the sequence
            }
        }
        return false;
    }

    [SkipLocalsInit]
    private SkipList.Iterator SeekInList(ReadOnlySpan<byte> userKey, ulong sequence)
    {
        int keyLength = userKey.Length + InternalKeys.TrailerSize;
        byte[]? rented = null;
        Span<byte> lookup = keyLength <= StackLookupKeyLimit
            ? stackalloc byte[StackLookupKeyLimit]
            : (rented = ArrayPool<byte>.Shared.Rent(keyLength));
        InternalKeys.Encode(lookup, userKey, sequence, ValueType.ValueTypeForSeek);
        var it = new SkipList.Iterator(_table);
        it.Seek(lookup[..keyLength]);
        if (rented != null)
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
        return it;
    }

    /// <summary>An iterator over the point entries; it holds a reference until disposed.</summary>
    public InternalIterator NewIterator()
    {
        Ref();
        return new MemTableIterator(this, _table);
    }

    /// <summary>
    /// An iterator over the range tombstones (key = start as an internal key, value = end user key),
    /// holding a reference until disposed; null when there are none.
    /// </summary>
    public InternalIterator? NewRangeTombstoneIterator()
    {
        if (NumRangeDeletes == 0)
        {
            return null;
        }
        Ref();
        return new MemTableIterator(this, _rangeDeletions);
    }

    /// <summary>Takes a reference. Throws ObjectDisposedException once the memtable is freed.</summary>
    public void Ref()
    {
        int current = Volatile.Read(ref _refs);
        while (true)
        {
            ObjectDisposedException.ThrowIf(current <= 0, this);
            int seen = Interlocked.CompareExchange(ref _refs, current + 1, current);
            if (seen == current)
            {
                return;
            }
            current = seen;
        }
    }

    /// <summary>The last reference was dropped (the arena is freed). Any thread.</summary>
    public bool IsReleased => Volatile.Read(ref _refs) <= 0;

    /// <summary>Drops a reference; the last one frees the arena. True when this call freed it.</summary>
    public bool Unref()
    {
        int current = Volatile.Read(ref _refs);
        while (true)
        {
            if (current <= 0)
            {
                throw new InvalidOperationException("MemTable.Unref called more times than Ref.");
            }
            int seen = Interlocked.CompareExchange(ref _refs, current - 1, current);
            if (seen == current)
            {
                break;
            }
            current = seen;
        }
        if (current == 1)
        {
            _arena.Dispose();
            return true;
        }
        return false;
    }

    /// <summary>Drops the creator's reference (once; later calls do nothing).</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            Unref();
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void ThrowIfFreed() => ObjectDisposedException.ThrowIf(Volatile.Read(ref _refs) <= 0, this);

    [DoesNotReturn]
    private static void ThrowSequenceOutOfRange(ulong sequence) =>
        throw new ArgumentOutOfRangeException(nameof(sequence), sequence, "Sequence numbers are at most 2^56 - 1.");

    [DoesNotReturn]
    private static SkipList ThrowBadType(ValueType type) =>
        throw new ArgumentException($"A memtable does not store entries of type {type}.", nameof(type));

    [DoesNotReturn]
    private static void ThrowTooLarge(int keyLength, int valueLength) =>
        throw new ArgumentException($"An entry with a {keyLength}-byte key and a {valueLength}-byte value is too large for a memtable.");
}
