using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Util;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Table;

/// <summary>
/// Presents an external table's entries (stored at sequence 0, one per user key) at the file's
/// global sequence number, as RocksDB's block iterators do with global_seqno: keys come out with
/// that sequence, and seeks are translated so the order stays that of the rewritten keys
/// (an entry (k, G, t) sorts before a target (k, s, u) when (G, t) packs larger than (s, u)).
/// Relies on SstFileWriter's invariant of one entry per user key. Owns the inner iterator.
/// Not thread-safe (one user, as every iterator).
/// </summary>
internal sealed class GlobalSequenceIterator : InternalIterator
{
    private readonly InternalIterator _inner;
    private readonly ulong _sequence;
    private readonly ByteBuffer _key = new(64);
    private readonly ByteBuffer _target = new(64);

    public GlobalSequenceIterator(InternalIterator inner, ulong sequence)
    {
        _inner = inner;
        _sequence = sequence;
    }

    public override bool Valid => _inner.Valid;

    public override ReadOnlySpan<byte> Key
    {
        get
        {
            ReadOnlySpan<byte> stored = _inner.Key;
            _key.Clear();
            _key.Append(stored);
            Span<byte> rewritten = _key.WrittenSpanMutable;
            Coding.EncodeFixed64(rewritten[^InternalKeys.TrailerSize..], (_sequence << 8) | (byte)InternalKeys.Type(stored));
            return rewritten;
        }
    }

    public override ReadOnlySpan<byte> Value => _inner.Value;

    public override void SeekToFirst() => _inner.SeekToFirst();

    public override void SeekToLast() => _inner.SeekToLast();

    public override void Seek(ReadOnlySpan<byte> target)
    {
        // An external file holds one entry per user key, stored as (k, 0, type): land on k's entry,
        // then step past it when its rewritten key (k, G, type) sorts before the target.
        ReadOnlySpan<byte> userKey = InternalKeys.UserKey(target);
        _inner.Seek(StoredTarget(userKey, InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek));
        if (_inner.Valid && InternalKeys.UserKey(_inner.Key).SequenceEqual(userKey) && RewrittenTag(_inner.Key) > Tag(target))
        {
            _inner.Next();
        }
    }

    public override void SeekForPrev(ReadOnlySpan<byte> target)
    {
        // Land on k's entry (or the last before k), then step back when the rewritten key sorts after the target.
        ReadOnlySpan<byte> userKey = InternalKeys.UserKey(target);
        _inner.SeekForPrev(StoredTarget(userKey, 0, 0));
        if (_inner.Valid && InternalKeys.UserKey(_inner.Key).SequenceEqual(userKey) && RewrittenTag(_inner.Key) < Tag(target))
        {
            _inner.Prev();
        }
    }

    /// <summary>The packed (sequence, type) trailer; a larger tag sorts first within a user key.</summary>
    private static ulong Tag(ReadOnlySpan<byte> internalKey) => Coding.DecodeFixed64(internalKey[^InternalKeys.TrailerSize..]);

    private ulong RewrittenTag(ReadOnlySpan<byte> storedKey) => (_sequence << 8) | (byte)InternalKeys.Type(storedKey);

    public override void Next() => _inner.Next();

    public override void Prev() => _inner.Prev();

    public override void Unpin() => _inner.Unpin();

    /// <summary>The inner table's filter: it holds user keys, whatever sequence number they are read with.</summary>
    public override bool MayContainUserKey(ReadOnlySpan<byte> userKey) => _inner.MayContainUserKey(userKey);

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            _inner.Dispose();
        }
    }

    private ReadOnlySpan<byte> StoredTarget(ReadOnlySpan<byte> userKey, ulong sequence, ValueType type)
    {
        _target.Clear();
        _target.Append(userKey);
        _target.AppendFixed64((sequence << 8) | (byte)type);
        return _target.WrittenSpan;
    }
}
