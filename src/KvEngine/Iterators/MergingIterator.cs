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
    private bool _forward = true;
    private bool _disposed;

    /// <param name="children">Child iterators; the merger takes ownership of them.</param>
    public MergingIterator(InternalIterator[] children)
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
        foreach (InternalIterator child in _children)
        {
            child.Unpin();
        }
    }

    public override void SeekToFirst()
    {
        ThrowIfDisposed();
        _heapSize = 0;
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
        for (int i = 0; i < _children.Length; i++)
        {
            _children[i].Seek(target);
        }
        _forward = true;
        BuildHeap();
    }

    public override void SeekForPrev(ReadOnlySpan<byte> target)
    {
        ThrowIfDisposed();
        _heapSize = 0;
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
        for (int i = 0; i < _children.Length; i++)
        {
            if (_children[i].Valid)
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
