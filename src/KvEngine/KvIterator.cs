using KvEngine.Db;
using KvEngine.Iterators;

namespace KvEngine;

/// <summary>
/// A cursor over the database as of one sequence number (a snapshot's, or the latest at creation).
/// Positioning: <see cref="SeekToFirst"/>, <see cref="SeekToLast"/>, <see cref="Seek"/>,
/// <see cref="SeekForPrev"/>; moving: <see cref="Next"/>, <see cref="Prev"/>. <see cref="Key"/>
/// and <see cref="Value"/> are valid until the next move. Holds memtables and table files alive
/// until disposed. Not thread-safe: one thread at a time.
/// </summary>
public sealed class KvIterator : IDisposable
{
    private readonly DbImpl _db;
    private readonly DbIterator _inner;
    private ReadState? _pinned;

    internal KvIterator(DbImpl db, DbIterator inner, ReadState pinned)
    {
        _db = db;
        _inner = inner;
        _pinned = pinned;
    }

    public bool Valid
    {
        get
        {
            ThrowIfDisposed();
            return _inner.Valid;
        }
    }

    public ReadOnlySpan<byte> Key
    {
        get
        {
            ThrowIfNotValid();
            return _inner.Key;
        }
    }

    public ReadOnlySpan<byte> Value
    {
        get
        {
            ThrowIfNotValid();
            return _inner.Value;
        }
    }

    public void SeekToFirst()
    {
        ThrowIfDisposed();
        _inner.SeekToFirst();
    }

    public void SeekToLast()
    {
        ThrowIfDisposed();
        _inner.SeekToLast();
    }

    /// <summary>Moves to the first key &gt;= <paramref name="key"/>.</summary>
    public void Seek(ReadOnlySpan<byte> key)
    {
        ThrowIfDisposed();
        _db.Statistics?.Record(Ticker.NumberDbSeek);
        _inner.Seek(key);
    }

    /// <summary>Moves to the last key &lt;= <paramref name="key"/>.</summary>
    public void SeekForPrev(ReadOnlySpan<byte> key)
    {
        ThrowIfDisposed();
        _db.Statistics?.Record(Ticker.NumberDbSeek);
        _inner.SeekForPrev(key);
    }

    public void Next()
    {
        ThrowIfNotValid();
        _db.Statistics?.Record(Ticker.NumberDbNext);
        _inner.Next();
    }

    public void Prev()
    {
        ThrowIfNotValid();
        _db.Statistics?.Record(Ticker.NumberDbPrev);
        _inner.Prev();
    }

    public void Dispose()
    {
        ReadState? pinned = Interlocked.Exchange(ref _pinned, null);
        if (pinned == null)
        {
            return;
        }
        _inner.Dispose();
        _db.ReleaseReadState(pinned);
    }

    private void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(_pinned == null, this);

    private void ThrowIfNotValid()
    {
        ThrowIfDisposed();
        if (!_inner.Valid)
        {
            throw new InvalidOperationException("The iterator is not positioned on an entry.");
        }
    }
}
