using KvEngine.Format;

using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Db;

/// <summary>
/// The working state of one MultiGet batch (RocksDB's MultiGetContext): the caller's keys sorted
/// (positions 0..Count-1 in key order, each naming its caller index), the keys still undecided
/// (<see cref="Pending"/>, in key order), each key's covering range-tombstone sequence, the
/// filter's verdicts for the file being probed, and the table lookup's outcome per key.
/// <para>
/// Invariants: <c>_order</c> is a permutation of the caller indices sorted by key (ties keep caller
/// order); a position equal to its predecessor is a duplicate, looked up once through its run's
/// first position. <see cref="Pending"/> holds distinct positions in increasing order. Arrays grow to
/// the largest batch seen and are kept: a steady-state batch allocates nothing. One per thread
/// (<see cref="Rent"/>); not thread-safe.
/// </para>
/// </summary>
internal sealed class MultiGetContext
{
    /// <summary>Outcome of a table probe: nothing found in the file.</summary>
    public const byte NotFound = 0xFF;

    private const int InsertionSortLimit = 16;

    [ThreadStatic]
    private static MultiGetContext? t_cached;

    private ReadOnlyMemory<byte>[] _keys = new ReadOnlyMemory<byte>[32];
    private int[] _order = new int[32];
    private bool[] _duplicate = new bool[32];
    private int[] _pending = new int[32];
    private ulong[] _covering = new ulong[32];
    private bool[] _mayMatch = new bool[32];
    private byte[] _outcome = new byte[32];
    private bool[] _decided = new bool[32];
    private int[] _batch = new int[32];
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

    /// <summary>Hands the context back for the thread's next batch; drops the key references.</summary>
    public void Return()
    {
        _keys.AsSpan(0, _count).Clear();
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

    /// <summary>True once a pending position's lookup is decided (it leaves <see cref="Pending"/> at the next <see cref="RemoveDecided"/>).</summary>
    public bool[] Decided => _decided;

    /// <summary>The user key at sorted position <paramref name="pos"/>.</summary>
    public ReadOnlySpan<byte> Key(int pos) => _keys[_order[pos]].Span;

    /// <summary>The caller's index of sorted position <paramref name="pos"/>.</summary>
    public int CallerIndex(int pos) => _order[pos];

    /// <summary>True when position <paramref name="pos"/> repeats the key before it.</summary>
    public bool IsDuplicate(int pos) => _duplicate[pos];

    /// <summary>Copies the caller's keys and sorts them; no position is pending until <see cref="AddPending"/>.</summary>
    public void Prepare(ReadOnlySpan<ReadOnlyMemory<byte>> keys)
    {
        int n = keys.Length;
        if (_keys.Length < n)
        {
            Grow(n);
        }
        keys.CopyTo(_keys);
        int maxKey = 0;
        for (int i = 0; i < n; i++)
        {
            _order[i] = i;
            maxKey = Math.Max(maxKey, keys[i].Length);
        }
        if (_seek.Length < maxKey + InternalKeys.TrailerSize)
        {
            _seek = new byte[Math.Max(maxKey + InternalKeys.TrailerSize, _seek.Length * 2)];
        }
        _count = n;
        _pendingCount = 0;
        Sort(_order.AsSpan(0, n));
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
        int size = Math.Max(n, _keys.Length * 2);
        _keys = new ReadOnlyMemory<byte>[size];
        _order = new int[size];
        _duplicate = new bool[size];
        _pending = new int[size];
        _covering = new ulong[size];
        _mayMatch = new bool[size];
        _outcome = new byte[size];
        _decided = new bool[size];
        _batch = new int[size];
    }

    // Sorts caller indices by key, ties by index (stable): insertion sort for small batches, heapsort
    // beyond (no allocation, no comparer delegate, O(n log n) on any input).
    private void Sort(Span<int> order)
    {
        if (order.Length <= InsertionSortLimit)
        {
            for (int i = 1; i < order.Length; i++)
            {
                int x = order[i];
                int j = i - 1;
                while (j >= 0 && Compare(order[j], x) > 0)
                {
                    order[j + 1] = order[j];
                    j--;
                }
                order[j + 1] = x;
            }
            return;
        }
        for (int i = (order.Length / 2) - 1; i >= 0; i--)
        {
            SiftDown(order, i, order.Length);
        }
        for (int end = order.Length - 1; end > 0; end--)
        {
            (order[0], order[end]) = (order[end], order[0]);
            SiftDown(order, 0, end);
        }
    }

    private void SiftDown(Span<int> heap, int root, int length)
    {
        while (true)
        {
            int child = (2 * root) + 1;
            if (child >= length)
            {
                return;
            }
            if (child + 1 < length && Compare(heap[child + 1], heap[child]) > 0)
            {
                child++;
            }
            if (Compare(heap[root], heap[child]) >= 0)
            {
                return;
            }
            (heap[root], heap[child]) = (heap[child], heap[root]);
            root = child;
        }
    }

    private int Compare(int a, int b)
    {
        int c = _keys[a].Span.SequenceCompareTo(_keys[b].Span);
        return c != 0 ? c : a.CompareTo(b);
    }
}
