using KvEngine.Format;

using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Table;

/// <summary>
/// The working state of one MultiGet batch (RocksDB's MultiGetContext): the caller's keys sorted
/// (positions 0..Count-1 in key order, each naming its caller index), the keys still undecided
/// (<see cref="Pending"/>, in key order), each key's covering range-tombstone sequence, the
/// filter's verdicts for the file being probed, and the table lookup's outcome per key.
/// <para>
/// Invariants: the caller's keys are copied end to end into <c>_arena</c> (so comparisons and
/// lookups read plain spans); <c>_order</c> is a permutation of the caller indices sorted by key
/// (ties by caller index); a position equal to its predecessor is a duplicate, looked up once through its run's
/// first position. <see cref="Pending"/> holds distinct positions in increasing order. Between the
/// two passes of a table lookup window, <see cref="BlockSlot"/> names each position's slot in
/// <see cref="WindowBlocks"/> (leases held by that lookup alone, cleared as it releases them). Arrays grow to
/// the largest batch seen and are kept: a steady-state batch allocates nothing. One per thread
/// (<see cref="Rent"/>); not thread-safe.
/// </para>
/// </summary>
internal sealed class MultiGetContext
{
    /// <summary>Outcome of a table probe: nothing found in the file.</summary>
    public const byte NotFound = 0xFF;

    /// <summary>
    /// Keys a table lookup takes together (RocksDB's MultiGetContext::MAX_BATCH_SIZE): their data
    /// blocks are all leased and prefetched before any is sought, so at most this many blocks are
    /// pinned at once by one batch.
    /// </summary>
    public const int LookupWindow = 32;

    [ThreadStatic]
    private static MultiGetContext? t_cached;

    private byte[] _arena = new byte[1024]; // the caller's keys, copied end to end
    private int[] _keyOffsets = new int[32]; // by caller index
    private int[] _keyLengths = new int[32];
    private ulong[] _prefixes = new ulong[32]; // by sorted position while sorting
    private int[] _order = new int[32];
    private bool[] _duplicate = new bool[32];
    private int[] _pending = new int[32];
    private ulong[] _covering = new ulong[32];
    private bool[] _mayMatch = new bool[32];
    private byte[] _outcome = new byte[32];
    private bool[] _decided = new bool[32];
    private int[] _batch = new int[32];
    private int[] _blockSlot = new int[32]; // by position: the slot of WindowBlocks holding its data block, -1: none
    private int[] _fileIndex = new int[32]; // by position: the file of the level being walked that may hold its key, -1: none
    private readonly BlockLease[] _windowBlocks = new BlockLease[LookupWindow];
    private readonly BlockHandle[] _windowHandles = new BlockHandle[LookupWindow];
    private byte[] _seek = new byte[64];
    private int _count;
    private int _pendingCount;

    /// <summary>The calling thread's context (a fresh one if it is in use further up the stack).</summary>
    public static MultiGetContext Rent()
    {
        MultiGetContext? c = t_cached;
        if (c is null)
        {
            return new MultiGetContext();
        }
        t_cached = null;
        return c;
    }

    /// <summary>Hands the context back for the thread's next batch.</summary>
    public void Return()
    {
        _count = 0;
        _pendingCount = 0;
        t_cached = this;
    }

    public int Count => _count;

    /// <summary>The undecided positions, in key order.</summary>
    public ReadOnlySpan<int> Pending => _pending.AsSpan(0, _pendingCount);

    /// <summary>Scratch for one file's positions.</summary>
    public int[] Batch => _batch;

    /// <summary>Newest visible range tombstone covering each position's key so far (0: none).</summary>
    public ulong[] Covering => _covering;

    /// <summary>The probed file's filter verdict per position.</summary>
    public bool[] MayMatch => _mayMatch;

    /// <summary>The probed file's entry type per position, or <see cref="NotFound"/>.</summary>
    public byte[] Outcome => _outcome;

    /// <summary>The table lookup's data block slot per position (in <see cref="WindowBlocks"/>), or -1.</summary>
    public int[] BlockSlot => _blockSlot;

    /// <summary>Per position, the index of the file of the sorted level being walked that may hold its key next, or -1 (the level's walk, Db/Read/MultiGetReader).</summary>
    public int[] FileIndex => _fileIndex;

    /// <summary>The data blocks leased by the table lookup's current window (each released before the next window).</summary>
    public BlockLease[] WindowBlocks => _windowBlocks;

    /// <summary>The handles of <see cref="WindowBlocks"/>, slot by slot.</summary>
    public BlockHandle[] WindowHandles => _windowHandles;

    /// <summary>True once a pending position's lookup is decided (it leaves <see cref="Pending"/> at the next <see cref="RemoveDecided"/>).</summary>
    public bool[] Decided => _decided;

    /// <summary>The user key at sorted position <paramref name="pos"/>.</summary>
    public ReadOnlySpan<byte> Key(int pos) => KeyOf(_order[pos]);

    private ReadOnlySpan<byte> KeyOf(int index) => _arena.AsSpan(_keyOffsets[index], _keyLengths[index]);

    /// <summary>The caller's index of sorted position <paramref name="pos"/>.</summary>
    public int CallerIndex(int pos) => _order[pos];

    /// <summary>True when position <paramref name="pos"/> repeats the key before it.</summary>
    public bool IsDuplicate(int pos) => _duplicate[pos];

    /// <summary>Copies the caller's keys and sorts them; no position is pending until <see cref="AddPending"/>.</summary>
    public void Prepare(ReadOnlySpan<ReadOnlyMemory<byte>> keys)
    {
        int n = keys.Length;
        if (_order.Length < n)
        {
            Grow(n);
        }
        long total = 0;
        int maxKey = 0;
        foreach (ReadOnlyMemory<byte> k in keys)
        {
            total += k.Length;
            maxKey = Math.Max(maxKey, k.Length);
        }
        if (_arena.Length < total)
        {
            _arena = new byte[(int)Math.Min(Array.MaxLength, Math.Max(total, _arena.Length * 2L))];
        }
        int offset = 0;
        for (int i = 0; i < n; i++)
        {
            ReadOnlySpan<byte> k = keys[i].Span;
            k.CopyTo(_arena.AsSpan(offset));
            _keyOffsets[i] = offset;
            _keyLengths[i] = k.Length;
            offset += k.Length;
            _order[i] = i;
            _prefixes[i] = Prefix(k);
        }
        if (_seek.Length < maxKey + InternalKeys.TrailerSize)
        {
            _seek = new byte[Math.Max(maxKey + InternalKeys.TrailerSize, _seek.Length * 2)];
        }
        _count = n;
        _pendingCount = 0;
        Sort(n);
        _duplicate[0] = false;
        for (int pos = 1; pos < n; pos++)
        {
            _duplicate[pos] = Key(pos).SequenceEqual(Key(pos - 1));
        }
    }

    /// <summary>Marks <paramref name="pos"/> undecided after the memtables, with their covering sequence.</summary>
    public void AddPending(int pos, ulong covering)
    {
        _covering[pos] = covering;
        _outcome[pos] = NotFound;
        _decided[pos] = false;
        _pending[_pendingCount++] = pos;
    }

    /// <summary>Drops the decided positions from <see cref="Pending"/>, keeping key order.</summary>
    public void RemoveDecided()
    {
        int kept = 0;
        for (int i = 0; i < _pendingCount; i++)
        {
            int pos = _pending[i];
            if (!_decided[pos])
            {
                _pending[kept++] = pos;
            }
        }
        _pendingCount = kept;
    }

    /// <summary>
    /// The internal key to seek for position <paramref name="pos"/> at <paramref name="sequence"/>,
    /// in the context's scratch buffer (valid until the next call).
    /// </summary>
    public ReadOnlySpan<byte> SeekKey(int pos, ulong sequence)
    {
        ReadOnlySpan<byte> key = Key(pos);
        int length = key.Length + InternalKeys.TrailerSize;
        InternalKeys.Encode(_seek.AsSpan(0, length), key, sequence, ValueType.ValueTypeForSeek);
        return _seek.AsSpan(0, length);
    }

    private void Grow(int n)
    {
        int size = Math.Max(n, _order.Length * 2);
        _keyOffsets = new int[size];
        _keyLengths = new int[size];
        _prefixes = new ulong[size];
        _order = new int[size];
        _duplicate = new bool[size];
        _pending = new int[size];
        _covering = new ulong[size];
        _mayMatch = new bool[size];
        _outcome = new byte[size];
        _decided = new bool[size];
        _batch = new int[size];
        _blockSlot = new int[size];
        _fileIndex = new int[size];
    }

    // The key's first 8 bytes, big-endian, zero-padded: prefixes order as the keys do, except that
    // equal prefixes say nothing.
    private static ulong Prefix(ReadOnlySpan<byte> key)
    {
        if (key.Length >= 8)
        {
            return System.Buffers.Binary.BinaryPrimitives.ReadUInt64BigEndian(key);
        }
        Span<byte> padded = stackalloc byte[8];
        padded.Clear();
        key.CopyTo(padded);
        return System.Buffers.Binary.BinaryPrimitives.ReadUInt64BigEndian(padded);
    }

    // Sorts the caller indices by key, ties by index: by the 8-byte prefixes first (the runtime's
    // introsort of primitive keys with the indices as items: no comparer, no allocation), then each
    // run of equal prefixes by full comparisons (introsort again, through one cached delegate: no
    // allocation, O(r log r) for a run of r keys even when every key shares its first 8 bytes).
    private void Sort(int n)
    {
        Span<int> order = _order.AsSpan(0, n);
        Span<ulong> prefixes = _prefixes.AsSpan(0, n);
        prefixes.Sort(order);
        int start = 0;
        for (int i = 1; i <= n; i++)
        {
            if (i == n || prefixes[i] != prefixes[start])
            {
                if (i - start > 1)
                {
                    order[start..i].Sort(_compare ??= Compare);
                }
                start = i;
            }
        }
    }

    // Caller indices by their keys, ties by index; created once per context (the per-thread
    // context is reused, so sorting allocates nothing in steady state).
    private Comparison<int>? _compare;

    private int Compare(int a, int b)
    {
        int c = KeyOf(a).SequenceCompareTo(KeyOf(b));
        return c != 0 ? c : a.CompareTo(b);
    }
}
