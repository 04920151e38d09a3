using System.Diagnostics;
using System.Runtime.CompilerServices;
using KvEngine.Format;

namespace KvEngine.Iterators;

/// <summary>
/// K-way merge of child iterators in <see cref="InternalKeyComparer"/> order (LevelDB's
/// merger.cc, RocksDB's MergingIterator).
/// <para>
/// Invariants: the heap array holds the indices of exactly the Valid children. Moving forward it is
/// a min-heap, moving in reverse a max-heap, over the order (internal key, child index): equal
/// internal keys in different children come out in child-index order forward and in the exact
/// opposite order in reverse. The current entry is the heap top. When the direction changes, every
/// child but the current one is repositioned relative to the current key (Seek forward,
/// SeekForPrev in reverse) and the heap is rebuilt, so that Next after Prev (and the reverse)
/// yields the neighbouring entry of the merged order.
/// </para>
/// <para>
/// Lazy seek (<c>newestFirst</c>, the read path's trees): the children are ordered newest first
/// (memtable, immutable memtables newest first, level-0 files newest first, then levels 1..n), so
/// for one user key an older child holds only smaller sequence numbers. <see cref="Seek"/> goes
/// through the children in that order; a child whose filter proves it holds nothing of the target's
/// user key (<see cref="InternalIterator.MayContainUserKey"/>) is passed over, the others are
/// sought, and the first that lands on the target's user key ends the walk: that entry is the
/// smallest internal key at or after the target in every child (a passed-over child lands on a
/// later user key, an older one on an older version), so it is the merged position. The children
/// passed over or not reached are deferred: unpositioned and outside the heap until a move needs
/// them. <see cref="Next"/> and <see cref="SkipChildren"/> first seek them to the current key
/// (equivalent to the target: they hold nothing between the two); <see cref="Prev"/> repositions
/// every child anyway. When no child lands on the user key, the passed-over children are sought
/// before the heap is built. So a seek to a stored key seeks the memtables and, of the tables, only
/// the one holding the key's newest version (and filter false positives).
/// </para>
/// <para>
/// Ownership: the merger owns its children and disposes them. Allocation: the heap array is
/// allocated once; Seek/Next/Prev allocate nothing. A child that throws (e.g.
/// <see cref="KvCorruptionException"/>) leaves the merger not Valid and the exception propagates.
/// Children must hold well-formed internal keys (at least 8 bytes). Not thread-safe.
/// </para>
/// </summary>
internal sealed class MergingIterator : InternalIterator
{
    private readonly InternalIterator[] _children;
    private readonly int[] _heap;
    private int _heapSize;
    // Children a lazy seek left unpositioned (see the type's remarks); null unless newest first.
    private readonly bool[]? _deferred;
    private int _deferredCount;
    private bool _forward = true;
    private bool _disposed;

    /// <param name="children">Child iterators; the merger takes ownership of them.</param>
    /// <param name="newestFirst">
    /// The children are ordered newest first, so that for any user key an older child holds only
    /// smaller sequence numbers (the read path's trees); enables the lazy <see cref="Seek"/>.
    /// </param>
    public MergingIterator(InternalIterator[] children, bool newestFirst = false)
    {
        ArgumentNullException.ThrowIfNull(children);
        _children = (InternalIterator[])children.Clone();
        for (int i = 0; i < _children.Length; i++)
        {
            if (_children[i] is null)
            {
                throw new ArgumentException("A child iterator is null.", nameof(children));
            }
        }
        _heap = new int[_children.Length];
        _deferred = newestFirst ? new bool[_children.Length] : null;
    }

    /// <summary>
    /// The cheapest iterator merging <paramref name="children"/>: an <see cref="EmptyIterator"/> for
    /// none, the child itself for one, otherwise a <see cref="MergingIterator"/>. Takes ownership.
    /// </summary>
    public static InternalIterator Create(InternalIterator[] children)
    {
        ArgumentNullException.ThrowIfNull(children);
        return children.Length switch
        {
            0 => new EmptyIterator(),
            1 => children[0] ?? throw new ArgumentException("A child iterator is null.", nameof(children)),
            _ => new MergingIterator(children),
        };
    }

    public int ChildCount => _children.Length;

    /// <summary>How many children the last <see cref="Seek"/> left unpositioned (for tests).</summary>
    internal int DeferredChildCount => _deferredCount;

    public override bool Valid => _heapSize > 0;

    public override ReadOnlySpan<byte> Key => Current.Key;

    public override ReadOnlySpan<byte> Value => Current.Value;

    private InternalIterator Current
    {
        get
        {
            if (_heapSize == 0)
            {
                throw new InvalidOperationException("The iterator is not positioned on an entry.");
            }
            return _children[_heap[0]];
        }
    }

    /// <summary>Unpins every child; not Valid afterwards.</summary>
    public override void Unpin()
    {
        _heapSize = 0;
        ClearDeferred();
        foreach (InternalIterator child in _children)
        {
            child.Unpin();
        }
    }

    public override void SeekToFirst()
    {
        ThrowIfDisposed();
        _heapSize = 0;
        ClearDeferred();
        for (int i = 0; i < _children.Length; i++)
        {
            _children[i].SeekToFirst();
        }
        _forward = true;
        BuildHeap();
    }

    public override void SeekToLast()
    {
        ThrowIfDisposed();
        _heapSize = 0;
        ClearDeferred();
        for (int i = 0; i < _children.Length; i++)
        {
            _children[i].SeekToLast();
        }
        _forward = false;
        BuildHeap();
    }

    public override void Seek(ReadOnlySpan<byte> target)
    {
        ThrowIfDisposed();
        _heapSize = 0;
        ClearDeferred();
        bool[]? deferred = _deferred;
        if (deferred is null)
        {
            for (int i = 0; i < _children.Length; i++)
            {
                _children[i].Seek(target);
            }
        }
        else
        {
            LazySeek(target, deferred);
        }
        _forward = true;
        BuildHeap();
    }

    // Newest first (type remarks): seeks the children up to the first landing on the target's user
    // key, passing over those whose filter excludes it, and defers the rest.
    private void LazySeek(ReadOnlySpan<byte> target, bool[] deferred)
    {
        ReadOnlySpan<byte> userKey = InternalKeys.UserKey(target);
        for (int i = 0; i < _children.Length; i++)
        {
            InternalIterator child = _children[i];
            if (!child.MayContainUserKey(userKey))
            {
                deferred[i] = true;
                _deferredCount++;
                continue;
            }
            child.Seek(target);
            if (child.Valid && InternalKeys.UserKey(child.Key).SequenceEqual(userKey))
            {
                for (int j = i + 1; j < _children.Length; j++)
                {
                    deferred[j] = true;
                }
                _deferredCount += _children.Length - i - 1;
                return;
            }
        }
        // No child holds the user key: the passed-over children hold the next keys too.
        if (_deferredCount > 0)
        {
            for (int i = 0; i < _children.Length; i++)
            {
                if (deferred[i])
                {
                    deferred[i] = false;
                    _children[i].Seek(target);
                }
            }
            _deferredCount = 0;
        }
    }

    public override void SeekForPrev(ReadOnlySpan<byte> target)
    {
        ThrowIfDisposed();
        _heapSize = 0;
        ClearDeferred();
        for (int i = 0; i < _children.Length; i++)
        {
            _children[i].SeekForPrev(target);
        }
        _forward = false;
        BuildHeap();
    }

    public override void Next()
    {
        ThrowIfNotValid();
        try
        {
            if (!_forward)
            {
                SwitchToForward();
            }
            else if (_deferredCount > 0)
            {
                PositionDeferred();
            }
            InternalIterator current = _children[_heap[0]];
            current.Next();
            ReplaceOrPopTop(current.Valid);
        }
        catch
        {
            _heapSize = 0;
            throw;
        }
    }

    public override void Prev()
    {
        ThrowIfNotValid();
        try
        {
            if (_forward)
            {
                ClearDeferred(); // SwitchToReverse repositions every child but the current one
                SwitchToReverse();
            }
            InternalIterator current = _children[_heap[0]];
            current.Prev();
            ReplaceOrPopTop(current.Valid);
        }
        catch
        {
            _heapSize = 0;
            throw;
        }
    }

    /// <summary>
    /// Range-deletion skip: moves every child from <paramref name="firstChild"/> on whose entry lies
    /// before <paramref name="target"/> in the current direction — forward to its first entry &gt;=
    /// target, in reverse to its last entry &lt;= target — then rebuilds the heap. Children that
    /// are exhausted or already past the target stay. The caller knows those children hold nothing
    /// it needs before the target.
    /// </summary>
    public void SkipChildren(int firstChild, ReadOnlySpan<byte> target)
    {
        ThrowIfDisposed();
        if (_heapSize == 0)
        {
            return;
        }
        try
        {
            if (_deferredCount > 0)
            {
                PositionDeferred();
            }
            bool moved = false;
            for (int j = Math.Max(firstChild, 0); j < _children.Length; j++)
            {
                InternalIterator child = _children[j];
                if (!child.Valid)
                {
                    continue;
                }
                int cmp = InternalKeyComparer.Compare(child.Key, target);
                if (_forward && cmp < 0)
                {
                    child.Seek(target);
                    moved = true;
                }
                else if (!_forward && cmp > 0)
                {
                    child.SeekForPrev(target);
                    moved = true;
                }
            }
            if (moved)
            {
                BuildHeap();
            }
        }
        catch
        {
            _heapSize = 0;
            throw;
        }
    }

    protected override void Dispose(bool disposing)
    {
        if (_disposed)
        {
            return;
        }
        _disposed = true;
        _heapSize = 0;
        if (disposing)
        {
            for (int i = 0; i < _children.Length; i++)
            {
                _children[i].Dispose();
            }
        }
    }

    // Positions the children a lazy seek deferred at the current key and adds the valid ones to the
    // (forward) heap. Seeking them to the current entry rather than the original target is the
    // same: an older child holds nothing between the two (type remarks). The current child stays on top.
    private void PositionDeferred()
    {
        bool[] deferred = _deferred!;
        int c = _heap[0];
        ReadOnlySpan<byte> key = _children[c].Key;
        for (int j = 0; j < _children.Length; j++)
        {
            if (deferred[j])
            {
                deferred[j] = false;
                _children[j].Seek(key);
            }
        }
        _deferredCount = 0;
        BuildHeap();
        Debug.Assert(_heap[0] == c, "the current child must stay on top after the deferred children are positioned");
    }

    private void ClearDeferred()
    {
        if (_deferredCount > 0)
        {
            Array.Clear(_deferred!);
            _deferredCount = 0;
        }
    }

    // Repositions every non-current child at the first entry after (key, current index) in the
    // merged forward order, then rebuilds the min-heap; the current child stays on top.
    private void SwitchToForward()
    {
        int c = _heap[0];
        ReadOnlySpan<byte> key = _children[c].Key;
        for (int j = 0; j < _children.Length; j++)
        {
            if (j == c)
            {
                continue;
            }
            InternalIterator child = _children[j];
            child.Seek(key);
            if (j < c && child.Valid && InternalKeyComparer.Compare(key, child.Key) == 0)
            {
                child.Next();
            }
        }
        _forward = true;
        BuildHeap();
        Debug.Assert(_heap[0] == c, "the current child must stay on top after a direction switch");
    }

    // Repositions every non-current child at the last entry before (key, current index) in the
    // merged order, then rebuilds the max-heap; the current child stays on top.
    private void SwitchToReverse()
    {
        int c = _heap[0];
        ReadOnlySpan<byte> key = _children[c].Key;
        for (int j = 0; j < _children.Length; j++)
        {
            if (j == c)
            {
                continue;
            }
            InternalIterator child = _children[j];
            child.SeekForPrev(key);
            if (j > c && child.Valid && InternalKeyComparer.Compare(key, child.Key) == 0)
            {
                child.Prev();
            }
        }
        _forward = false;
        BuildHeap();
        Debug.Assert(_heap[0] == c, "the current child must stay on top after a direction switch");
    }

    private void BuildHeap()
    {
        int n = 0;
        bool[]? deferred = _deferredCount > 0 ? _deferred : null;
        for (int i = 0; i < _children.Length; i++)
        {
            if (_children[i].Valid && (deferred is null || !deferred[i]))
            {
                _heap[n++] = i;
            }
        }
        _heapSize = n;
        for (int i = (n >> 1) - 1; i >= 0; i--)
        {
            SiftDown(i);
        }
    }

    private void ReplaceOrPopTop(bool topStillValid)
    {
        if (!topStillValid)
        {
            _heapSize--;
            if (_heapSize == 0)
            {
                return;
            }
            _heap[0] = _heap[_heapSize];
        }
        SiftDown(0);
    }

    private void SiftDown(int i)
    {
        int[] heap = _heap;
        int n = _heapSize;
        int item = heap[i];
        while (true)
        {
            int child = (i << 1) + 1;
            if (child >= n)
            {
                break;
            }
            int right = child + 1;
            if (right < n && Before(heap[right], heap[child]))
            {
                child = right;
            }
            if (!Before(heap[child], item))
            {
                break;
            }
            heap[i] = heap[child];
            i = child;
        }
        heap[i] = item;
    }

    // True when child a's entry comes before child b's in the current direction.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool Before(int a, int b)
    {
        int cmp = InternalKeyComparer.Compare(_children[a].Key, _children[b].Key);
        if (cmp == 0)
        {
            cmp = a.CompareTo(b);
        }
        return _forward ? cmp < 0 : cmp > 0;
    }

    private void ThrowIfNotValid()
    {
        ThrowIfDisposed();
        if (_heapSize == 0)
        {
            throw new InvalidOperationException("The iterator is not positioned on an entry.");
        }
    }

    private void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(_disposed, this);
}
