using KvEngine.Format;
using KvEngine.Iterators;

namespace KvEngine;

/// <summary>
/// Walks the point entries of one table as they are stored (what sst_dump's scan prints): every
/// version of every key in internal-key order (user key ascending, then sequence number
/// descending), deletions and merge operands included, each with its
/// <see cref="Sequence"/> and <see cref="EntryType"/>. Nothing is merged or hidden; for the live
/// view of a database use <see cref="KvDb.NewIterator(ReadOptions?)"/>. Range deletions are listed
/// by <see cref="SstFileReader.GetRangeTombstones"/>.
/// <para>
/// Not thread-safe. <see cref="Key"/> and <see cref="Value"/> stay valid until the next move or
/// <see cref="Dispose"/>. A damaged block raises <see cref="KvCorruptionException"/> naming the
/// file. Dispose every iterator before its <see cref="SstFileReader"/>.
/// </para>
/// </summary>
public sealed class SstFileIterator : IDisposable
{
    private readonly InternalIterator _inner;
    private byte[] _seekKey = new byte[64];
    private bool _disposed;

    internal SstFileIterator(InternalIterator inner) => _inner = inner;

    /// <summary>Whether the iterator is positioned on an entry.</summary>
    public bool Valid
    {
        get
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            return _inner.Valid;
        }
    }

    /// <summary>The user key of the current entry. Requires <see cref="Valid"/>.</summary>
    public ReadOnlySpan<byte> Key => InternalKeys.UserKey(Current());

    /// <summary>The value (or merge operand) of the current entry; empty for deletions. Requires <see cref="Valid"/>.</summary>
    public ReadOnlySpan<byte> Value
    {
        get
        {
            Current();
            return _inner.Value;
        }
    }

    /// <summary>The sequence number of the current entry (0 for entries compacted to the bottom). Requires <see cref="Valid"/>.</summary>
    public ulong Sequence => InternalKeys.Sequence(Current());

    /// <summary>The kind of the current entry. Requires <see cref="Valid"/>.</summary>
    public SstEntryType EntryType => (SstEntryType)(byte)InternalKeys.Type(Current());

    /// <summary>Positions at the table's first entry.</summary>
    public void SeekToFirst()
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        _inner.SeekToFirst();
    }

    /// <summary>Positions at the table's last entry.</summary>
    public void SeekToLast()
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        _inner.SeekToLast();
    }

    /// <summary>Positions at the first entry whose user key is at or after <paramref name="userKey"/> (its newest version first).</summary>
    public void Seek(ReadOnlySpan<byte> userKey)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        int length = userKey.Length + InternalKeys.TrailerSize;
        if (_seekKey.Length < length)
        {
            _seekKey = new byte[length];
        }
        InternalKeys.Encode(_seekKey, userKey, InternalKeys.MaxSequenceNumber, Format.ValueType.ValueTypeForSeek);
        _inner.Seek(_seekKey.AsSpan(0, length));
    }

    /// <summary>Moves to the next entry. Requires <see cref="Valid"/>.</summary>
    public void Next()
    {
        Current();
        _inner.Next();
    }

    /// <summary>Moves to the previous entry. Requires <see cref="Valid"/>.</summary>
    public void Prev()
    {
        Current();
        _inner.Prev();
    }

    /// <summary>Releases the blocks the iterator holds.</summary>
    public void Dispose()
    {
        if (!_disposed)
        {
            _disposed = true;
            _inner.Dispose();
        }
    }

    private ReadOnlySpan<byte> Current()
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (!_inner.Valid)
        {
            throw new InvalidOperationException("The iterator is not positioned on an entry.");
        }
        return _inner.Key;
    }
}
