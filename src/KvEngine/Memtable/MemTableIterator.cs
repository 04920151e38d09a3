using KvEngine.Iterators;

namespace KvEngine.Memtable;

/// <summary>
/// An <see cref="InternalIterator"/> over one of a <see cref="MemTable"/>'s skiplists: Key is the
/// entry's internal key, Value its value, both spans into the arena (valid until the next move or
/// Dispose). Holds a reference on the memtable from construction (taken by the memtable) until
/// Dispose. Sees entries added concurrently or not, per <see cref="SkipList"/>'s rules. One user at a
/// time.
/// </summary>
internal sealed class MemTableIterator : InternalIterator
{
    private MemTable? _owner;
    private SkipList.Iterator _cursor;

    /// <summary>Takes over a reference the caller already holds on <paramref name="owner"/>.</summary>
    internal MemTableIterator(MemTable owner, SkipList list)
    {
        _owner = owner;
        _cursor = new SkipList.Iterator(list);
    }

    public override bool Valid => _cursor.Valid;

    public override ReadOnlySpan<byte> Key
    {
        get
        {
            ThrowIfNotValid();
            return _cursor.Key;
        }
    }

    public override ReadOnlySpan<byte> Value
    {
        get
        {
            ThrowIfNotValid();
            return _cursor.Value;
        }
    }

    public override void SeekToFirst()
    {
        ThrowIfDisposed();
        _cursor.SeekToFirst();
    }

    public override void SeekToLast()
    {
        ThrowIfDisposed();
        _cursor.SeekToLast();
    }

    public override void Seek(ReadOnlySpan<byte> target)
    {
        ThrowIfDisposed();
        _cursor.Seek(target);
    }

    public override void SeekForPrev(ReadOnlySpan<byte> target)
    {
        ThrowIfDisposed();
        _cursor.SeekForPrev(target);
    }

    public override void Next()
    {
        ThrowIfNotValid();
        _cursor.Next();
    }

    public override void Prev()
    {
        ThrowIfNotValid();
        _cursor.Prev();
    }

    protected override void Dispose(bool disposing)
    {
        if (disposing && _owner != null)
        {
            _cursor.Reset();
            MemTable owner = _owner;
            _owner = null;
            owner.Unref();
        }
        base.Dispose(disposing);
    }

    private void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(_owner == null, this);

    private void ThrowIfNotValid()
    {
        if (!_cursor.Valid)
        {
            throw new InvalidOperationException(_owner == null ? "The iterator is disposed." : "The iterator is not positioned on an entry.");
        }
    }
}
