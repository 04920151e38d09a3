using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Util;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Table;

/// <summary>
/// Presents an external table's entries (stored at sequence 0, one per user key) at the file's
/// global sequence number, as RocksDB's block iterators do with global_seqno: keys come out with
/// that sequence, and seeks are translated so the order stays that of the rewritten keys
/// (an entry (k, G) sorts before a target (k, s) only when G &gt; s). Owns the inner iterator.
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
        // Every stored entry of user key k is (k, 0): seek to k itself, then step past it when
        // its rewritten key (k, G) sorts before the target (G > target's sequence).
        ReadOnlySpan<byte> userKey = InternalKeys.UserKey(target);
        _inner.Seek(StoredTarget(userKey, InternalKeys.MaxSequenceNumber));
        if (_inner.Valid && InternalKeys.Sequence(target) < _sequence && InternalKeys.UserKey(_inner.Key).SequenceEqual(userKey))
        {
            _inner.Next();
        }
    }

    public override void SeekForPrev(ReadOnlySpan<byte> target)
    {
        // The last entry at or before the target: (k, G) qualifies when G >= target's sequence.
        ReadOnlySpan<byte> userKey = InternalKeys.UserKey(target);
        if (InternalKeys.Sequence(target) <= _sequence)
        {
            _inner.SeekForPrev(StoredTarget(userKey, 0, (ValueType)0));
        }
        else
        {
            _inner.SeekForPrev(StoredTarget(userKey, InternalKeys.MaxSequenceNumber));
            if (_inner.Valid && InternalKeys.UserKey(_inner.Key).SequenceEqual(userKey))
            {
                _inner.Prev();
            }
        }
    }

    public override void Next() => _inner.Next();

    public override void Prev() => _inner.Prev();

    public override void Unpin() => _inner.Unpin();

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            _inner.Dispose();
        }
    }

    private ReadOnlySpan<byte> StoredTarget(ReadOnlySpan<byte> userKey, ulong sequence, ValueType type = ValueType.ValueTypeForSeek)
    {
        _target.Clear();
        _target.Append(userKey);
        _target.AppendFixed64((sequence << 8) | (byte)type);
        return _target.WrittenSpan;
    }
}
