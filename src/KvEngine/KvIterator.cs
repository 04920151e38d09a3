using KvEngine.Db;
using KvEngine.Iterators;

namespace KvEngine;

/// <summary>
/// A cursor over the database as of one sequence number (a snapshot's, or the latest at creation).
/// Positioning: <see cref="SeekToFirst"/>, <see cref="SeekToLast"/>, <see cref="Seek"/>,
/// <see cref="SeekForPrev"/>; moving: <see cref="Next"/>, <see cref="Prev"/>. <see cref="Key"/>
/// and <see cref="Value"/> are valid until the next move. Holds memtables and table files alive
/// until disposed or refreshed (<see cref="Refresh"/>). Not thread-safe: one thread at a time.
/// <para>
/// Allocation: once positioned, moves allocate nothing. Creating an iterator allocates only this
/// object when the database has a spare internal iterator tree over its current state (one left by
/// a disposed iterator with the same checksum and fill-cache options, before any memtable switch,
/// flush or compaction); <see cref="Refresh"/> allocates nothing while that state is current.
/// </para>
/// <para>
/// Prefix seek: in a family with a <see cref="ColumnFamilyOptions.PrefixExtractor"/>, Seek and
/// SeekForPrev skip tables whose prefix filter lacks the target's prefix unless
/// <see cref="ReadOptions.TotalOrderSeek"/> is set, so only the keys with the target's prefix are
/// certain to be seen (RocksDB's semantics); use <see cref="ReadOptions.PrefixSameAsStart"/> to stop
/// at the prefix's end, or TotalOrderSeek for a range scan across prefixes.
/// </para>
/// </summary>
public sealed class KvIterator : IDisposable
{
    private readonly DbImpl _db;
    private DbIterator _inner;
    private PinnedIterator? _pinned;

    internal KvIterator(DbImpl db, PinnedIterator pinned)
    {
        _db = db;
        _inner = pinned.Iterator;
        _pinned = pinned;
    }

    /// <summary>True when the iterator is positioned on an entry; false before the first positioning and after moving past either end.</summary>
    public bool Valid
    {
        get
        {
            ThrowIfDisposed();
            return _inner.Valid;
        }
    }

    /// <summary>The current entry's key; valid until the next move. Throws <see cref="InvalidOperationException"/> when not <see cref="Valid"/>.</summary>
    public ReadOnlySpan<byte> Key
    {
        get
        {
            ThrowIfNotValid();
            return _inner.Key;
        }
    }

    /// <summary>The current entry's value; valid until the next move. Throws <see cref="InvalidOperationException"/> when not <see cref="Valid"/>.</summary>
    public ReadOnlySpan<byte> Value
    {
        get
        {
            ThrowIfNotValid();
            return _inner.Value;
        }
    }

    /// <summary>Moves to the first key; not <see cref="Valid"/> when there is none.</summary>
    public void SeekToFirst()
    {
        ThrowIfDisposed();
        _inner.SeekToFirst();
    }

    /// <summary>Moves to the last key; not <see cref="Valid"/> when there is none.</summary>
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

    /// <summary>Moves to the next key; requires <see cref="Valid"/>.</summary>
    public void Next()
    {
        ThrowIfNotValid();
        _db.Statistics?.Record(Ticker.NumberDbNext);
        _inner.Next();
    }

    /// <summary>Moves to the previous key; requires <see cref="Valid"/>.</summary>
    public void Prev()
    {
        ThrowIfNotValid();
        _db.Statistics?.Record(Ticker.NumberDbPrev);
        _inner.Prev();
    }

    /// <summary>
    /// Renews the iterator to read the database's latest state (RocksDB's <c>Iterator::Refresh</c>):
    /// the latest sequence number, the current memtables and table files (those held before are
    /// released). The iterator is not <see cref="Valid"/> afterwards until positioned again. Cheaper
    /// than a new iterator; allocates nothing while no memtable switch, flush or compaction happened
    /// since the iterator was created or last refreshed.
    /// </summary>
    /// <exception cref="NotSupportedException">The iterator was created with <see cref="ReadOptions.Snapshot"/> (as in RocksDB).</exception>
    /// <exception cref="ObjectDisposedException">The iterator or its database was disposed.</exception>
    public void Refresh()
    {
        ThrowIfDisposed();
        PinnedIterator renewed = _db.RefreshIterator(_pinned!);
        _pinned = renewed;
        _inner = renewed.Iterator;
    }

    /// <summary>Releases the memtables and table files the iterator holds; further calls throw <see cref="ObjectDisposedException"/>.</summary>
    public void Dispose()
    {
        PinnedIterator? pinned = Interlocked.Exchange(ref _pinned, null);
        if (pinned == null)
        {
            return;
        }
        _db.ReturnIterator(pinned);
    }

    private void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(_pinned == null, this);

    // Inlined on every Key/Value/Next (a scan calls them per entry); the throwing part is cold.
    private void ThrowIfNotValid()
    {
        if (_pinned == null || !_inner.Valid)
        {
            ThrowNotValid();
        }
    }

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private void ThrowNotValid()
    {
        ThrowIfDisposed();
        throw new InvalidOperationException("The iterator is not positioned on an entry.");
    }
}
