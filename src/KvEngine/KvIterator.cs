using KvEngine.Db;
using KvEngine.Db.Read;
using KvEngine.Iterators;

namespace KvEngine;

/// <summary>
/// A cursor over the database as of one sequence number (a snapshot's, or the latest at creation).
/// Positioning: <see cref="SeekToFirst"/>, <see cref="SeekToLast"/>, <see cref="Seek"/>,
/// <see cref="SeekForPrev"/>; moving: <see cref="Next"/>, <see cref="Prev"/>. <see cref="Key"/>
/// and <see cref="Value"/> are valid until the next move. Holds memtables and table files alive
/// until disposed or refreshed (<see cref="Refresh"/>). Not thread-safe: one thread at a time.
/// <para>
/// A handle, like <see cref="System.Threading.Tasks.ValueTask"/>: a struct naming one lease of a
/// pooled cursor. Copies name the same iterator (a move through one is seen through all), and
/// once any of them is disposed every copy throws <see cref="ObjectDisposedException"/>, while a
/// second Dispose does nothing, even after the cursor went on to serve another iterator.
/// <c>default(KvIterator)</c> behaves as a disposed iterator.
/// </para>
/// <para>
/// Closing: once its database is disposed (even by another thread while the iterator is in use)
/// every call throws <see cref="ObjectDisposedException"/>, and <see cref="Dispose"/> still does
/// its work: the memtables, table readers and blocks the iterator holds stay valid until then, so
/// dispose iterators that outlive their database too.
/// </para>
/// <para>
/// Allocation: none in steady state. Creating an iterator takes a pooled cursor and, when the
/// database has a spare internal iterator tree over its current state (one left by a disposed
/// iterator with the same checksum and fill-cache options, before any memtable switch, flush or
/// compaction), that tree; moves allocate nothing once positioned; <see cref="Refresh"/>
/// allocates nothing while that state is current.
/// </para>
/// <para>
/// Prefix seek: in a family with a <see cref="ColumnFamilyOptions.PrefixExtractor"/>, Seek and
/// SeekForPrev skip tables whose prefix filter lacks the target's prefix unless
/// <see cref="ReadOptions.TotalOrderSeek"/> is set, so only the keys with the target's prefix are
/// certain to be seen (RocksDB's semantics); use <see cref="ReadOptions.PrefixSameAsStart"/> to stop
/// at the prefix's end, or TotalOrderSeek for a range scan across prefixes.
/// </para>
/// </summary>
public readonly struct KvIterator : IDisposable, IEquatable<KvIterator>
{
    private readonly IteratorCursor? _cursor;
    private readonly int _token;

    internal KvIterator(IteratorCursor cursor, int token)
    {
        _cursor = cursor;
        _token = token;
    }

    /// <summary>True when the iterator is positioned on an entry; false before the first positioning and after moving past either end.</summary>
    public bool Valid => Live.Inner.Valid;

    /// <summary>The current entry's key; valid until the next move. Throws <see cref="InvalidOperationException"/> when not <see cref="Valid"/>.</summary>
    public ReadOnlySpan<byte> Key => Positioned.Key;

    /// <summary>The current entry's value; valid until the next move. Throws <see cref="InvalidOperationException"/> when not <see cref="Valid"/>.</summary>
    public ReadOnlySpan<byte> Value => Positioned.Value;

    /// <summary>Moves to the first key; not <see cref="Valid"/> when there is none.</summary>
    public void SeekToFirst() => Live.Inner.SeekToFirst();

    /// <summary>Moves to the last key; not <see cref="Valid"/> when there is none.</summary>
    public void SeekToLast() => Live.Inner.SeekToLast();

    /// <summary>Moves to the first key &gt;= <paramref name="key"/>.</summary>
    public void Seek(ReadOnlySpan<byte> key)
    {
        IteratorCursor c = Live;
        c.Db.Statistics?.Record(Ticker.NumberDbSeek);
        c.Inner.Seek(key);
    }

    /// <summary>Moves to the last key &lt;= <paramref name="key"/>.</summary>
    public void SeekForPrev(ReadOnlySpan<byte> key)
    {
        IteratorCursor c = Live;
        c.Db.Statistics?.Record(Ticker.NumberDbSeek);
        c.Inner.SeekForPrev(key);
    }

    /// <summary>Moves to the next key; requires <see cref="Valid"/>.</summary>
    public void Next()
    {
        DbIterator inner = Positioned;
        _cursor!.Db.Statistics?.Record(Ticker.NumberDbNext);
        inner.Next();
    }

    /// <summary>Moves to the previous key; requires <see cref="Valid"/>.</summary>
    public void Prev()
    {
        DbIterator inner = Positioned;
        _cursor!.Db.Statistics?.Record(Ticker.NumberDbPrev);
        inner.Prev();
    }

    /// <summary>
    /// Renews the iterator to read the database's latest state (RocksDB's <c>Iterator::Refresh</c>):
    /// the latest sequence number, the current memtables and table files (those held before are
    /// released). The iterator is not <see cref="Valid"/> afterwards until positioned again. Cheaper
    /// than a new iterator; allocates nothing while no memtable switch, flush or compaction happened
    /// since the iterator was created or last refreshed.
    /// </summary>
    /// <exception cref="KvNotSupportedException">The iterator was created with <see cref="ReadOptions.Snapshot"/> (as in RocksDB).</exception>
    /// <exception cref="ObjectDisposedException">The iterator or its database was disposed.</exception>
    public void Refresh()
    {
        IteratorCursor c = Live;
        c.Replace(c.Db.RefreshIterator(c.Pinned!));
    }

    /// <summary>Releases the memtables and table files the iterator holds; further calls throw <see cref="ObjectDisposedException"/>. A second Dispose does nothing.</summary>
    public void Dispose()
    {
        IteratorCursor? c = _cursor;
        if (c?.TryEnd(_token) is not { } pinned)
        {
            return;
        }
        c.Db.ReturnIterator(pinned);
        c.Db.IteratorCursors.Return(c);
    }

    /// <summary>True when both name the same iterator (copies of one <see cref="KvDb.NewIterator(ReadOptions?)"/> result).</summary>
    public bool Equals(KvIterator other) => ReferenceEquals(_cursor, other._cursor) && _token == other._token;

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is KvIterator other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => HashCode.Combine(_cursor, _token);

    /// <summary>True when both name the same iterator.</summary>
    public static bool operator ==(KvIterator left, KvIterator right) => left.Equals(right);

    /// <summary>True unless both name the same iterator.</summary>
    public static bool operator !=(KvIterator left, KvIterator right) => !left.Equals(right);

    // The cursor while this lease is current and its database open; inlined on every call (a scan
    // makes several per entry). The database check is what a caller sees; the memory the iterator
    // reads stays valid after a close anyway (its pinned read state keeps it until Dispose).
    private IteratorCursor Live
    {
        [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.AggressiveInlining)]
        get
        {
            IteratorCursor? c = _cursor;
            if (c == null || c.Token != _token || c.Db.IsDisposed)
            {
                ThrowDisposed();
            }
            return c;
        }
    }

    // The lease's iterator when positioned on an entry (Key, Value, Next, Prev); the throwing part is cold.
    private DbIterator Positioned
    {
        [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.AggressiveInlining)]
        get
        {
            DbIterator inner = Live.Inner;
            if (!inner.Valid)
            {
                ThrowNotValid();
            }
            return inner;
        }
    }

    [System.Diagnostics.CodeAnalysis.DoesNotReturn]
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static void ThrowDisposed() => throw new ObjectDisposedException(nameof(KvIterator));

    [System.Diagnostics.CodeAnalysis.DoesNotReturn]
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static void ThrowNotValid() => throw new InvalidOperationException("The iterator is not positioned on an entry.");
}
