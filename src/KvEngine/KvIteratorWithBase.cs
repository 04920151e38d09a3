using System.Buffers;
using KvEngine.Transactions;

namespace KvEngine;

/// <summary>
/// An iterator over a database iterator overlaid with a <see cref="WriteBatchWithIndex"/>'s writes
/// to one column family (RocksDB's BaseDeltaIterator, from
/// <see cref="WriteBatchWithIndex.NewIteratorWithBase(ColumnFamilyHandle, KvIterator, ReadOptions?)"/>, or
/// a transaction's NewIterator): a key the batch puts shows the batch's
/// value, a key it deletes is skipped, a key it merges into shows the operands applied on top of
/// the batch's or else the base iterator's value. Forward and backward, Seek and SeekForPrev;
/// the batch's keys are held to the bounds of the <see cref="ReadOptions"/> given.
/// <para>
/// <see cref="Key"/> and <see cref="Value"/> are valid until the next move or a change of the
/// batch. Changing the batch while iterating is allowed: the iterator sees the change when it
/// next positions (Seek, SeekForPrev, SeekToFirst, SeekToLast). Not thread-safe. Dispose it (it
/// disposes the base iterator).
/// </para>
/// </summary>
public sealed class KvIteratorWithBase : IDisposable
{
    private readonly WriteBatchWithIndex _batch;
    private readonly uint _cf;
    private readonly string _family;
    private readonly KvMergeOperator? _mergeOperator;
    private readonly byte[]? _lower;
    private readonly byte[]? _upper;
    private readonly ArrayBufferWriter<byte> _keyCopy = new();
    private KvIterator _base;
    private BatchIndexEntry? _delta; // the first entry of the delta's current key
    private bool _forward = true;
    private bool _currentIsDelta;
    private bool _equalKeys;
    private byte[]? _mergedValue;
    private BatchIndexEntry? _deltaValueEntry;
    private bool _disposed;

    internal KvIteratorWithBase(WriteBatchWithIndex batch, uint cf, string family, KvMergeOperator? mergeOperator,
        KvIterator baseIterator, ReadOptions? options)
    {
        _batch = batch;
        _cf = cf;
        _family = family;
        _mergeOperator = mergeOperator;
        _base = baseIterator;
        _lower = options?.IterateLowerBound;
        _upper = options?.IterateUpperBound;
    }

    /// <summary>True when positioned on an entry.</summary>
    public bool Valid { get; private set; }

    /// <summary>The current key; valid until the next move.</summary>
    public ReadOnlySpan<byte> Key
    {
        get
        {
            ThrowIfNotValid();
            return _currentIsDelta ? _delta!.Key(Rep) : _base.Key;
        }
    }

    /// <summary>The current value; valid until the next move.</summary>
    public ReadOnlySpan<byte> Value
    {
        get
        {
            ThrowIfNotValid();
            if (!_currentIsDelta)
            {
                return _base.Value;
            }
            return _mergedValue ?? _deltaValueEntry!.Value(Rep);
        }
    }

    private ReadOnlySpan<byte> Rep => _batch.WriteBatch.Data;

    /// <summary>Moves to the first key.</summary>
    public void SeekToFirst()
    {
        ThrowIfDisposed();
        _forward = true;
        if (_lower != null)
        {
            _base.Seek(_lower);
            _delta = _batch.Index.FindGreaterOrEqual(Rep, _cf, _lower, int.MinValue);
        }
        else
        {
            _base.SeekToFirst();
            _delta = _batch.Index.First(Rep, _cf);
        }
        UpdateCurrent();
    }

    /// <summary>Moves to the last key.</summary>
    public void SeekToLast()
    {
        ThrowIfDisposed();
        _forward = false;
        if (_upper != null)
        {
            _base.SeekForPrev(_upper);
            if (_base.Valid && _base.Key.SequenceEqual(_upper))
            {
                _base.Prev();
            }
            _delta = KeyStart(_batch.Index.FindLessThan(Rep, _cf, _upper, int.MinValue));
        }
        else
        {
            _base.SeekToLast();
            _delta = KeyStart(_batch.Index.Last(_cf));
        }
        UpdateCurrent();
    }

    /// <summary>Moves to the first key &gt;= <paramref name="key"/>.</summary>
    public void Seek(ReadOnlySpan<byte> key)
    {
        ThrowIfDisposed();
        _forward = true;
        _base.Seek(key);
        _delta = _batch.Index.FindGreaterOrEqual(Rep, _cf, key, int.MinValue);
        UpdateCurrent();
    }

    /// <summary>Moves to the last key &lt;= <paramref name="key"/>.</summary>
    public void SeekForPrev(ReadOnlySpan<byte> key)
    {
        ThrowIfDisposed();
        _forward = false;
        _base.SeekForPrev(key);
        _delta = KeyStart(_batch.Index.FindLessThan(Rep, _cf, key, int.MaxValue));
        UpdateCurrent();
    }

    /// <summary>Moves to the next key; requires <see cref="Valid"/>.</summary>
    public void Next()
    {
        ThrowIfNotValid();
        if (!_forward)
        {
            // Direction change: position both sides at the current key, going forward.
            CopyKey();
            Seek(_keyCopy.WrittenSpan);
            if (!Valid)
            {
                return;
            }
        }
        Advance();
        UpdateCurrent();
    }

    /// <summary>Moves to the previous key; requires <see cref="Valid"/>.</summary>
    public void Prev()
    {
        ThrowIfNotValid();
        if (_forward)
        {
            CopyKey();
            SeekForPrev(_keyCopy.WrittenSpan);
            if (!Valid)
            {
                return;
            }
        }
        Advance();
        UpdateCurrent();
    }

    /// <summary>Disposes the base iterator.</summary>
    public void Dispose()
    {
        if (!_disposed)
        {
            _disposed = true;
            Valid = false;
            _base.Dispose();
        }
    }

    private void CopyKey()
    {
        _keyCopy.ResetWrittenCount();
        _keyCopy.Write(Key);
    }

    /// <summary>Steps past the current key in the current direction.</summary>
    private void Advance()
    {
        if (_currentIsDelta)
        {
            if (_equalKeys)
            {
                StepBase();
            }
            StepDelta();
        }
        else
        {
            StepBase();
        }
    }

    private void StepBase()
    {
        if (_forward)
        {
            _base.Next();
        }
        else
        {
            _base.Prev();
        }
    }

    /// <summary>Moves the delta to the next (or previous) key's first entry.</summary>
    private void StepDelta()
    {
        ReadOnlySpan<byte> rep = Rep;
        BatchIndexEntry current = _delta!;
        if (_forward)
        {
            BatchIndexEntry? e = current.Next[0];
            while (e != null && e.ColumnFamily == _cf && e.Key(rep).SequenceEqual(current.Key(rep)))
            {
                e = e.Next[0];
            }
            _delta = e != null && e.ColumnFamily == _cf ? e : null;
        }
        else
        {
            _delta = KeyStart(_batch.Index.FindLessThan(rep, _cf, current.Key(rep), int.MinValue));
        }
    }

    /// <summary>The first entry of <paramref name="e"/>'s key (null when <paramref name="e"/> is null or of another family).</summary>
    private BatchIndexEntry? KeyStart(BatchIndexEntry? e)
    {
        if (e == null || e.ColumnFamily != _cf)
        {
            return null;
        }
        ReadOnlySpan<byte> rep = Rep;
        return _batch.Index.FindGreaterOrEqual(rep, _cf, e.Key(rep), int.MinValue);
    }

    /// <summary>The key lies on the near side of the bound the iteration starts from (below the lower bound going forward, at or past the upper going backward).</summary>
    private bool BeforeStart(ReadOnlySpan<byte> key) =>
        _forward ? _lower != null && key.SequenceCompareTo(_lower) < 0 : _upper != null && key.SequenceCompareTo(_upper) >= 0;

    /// <summary>The key lies within the bound the iteration moves towards.</summary>
    private bool BeforeEnd(ReadOnlySpan<byte> key) =>
        _forward ? _upper == null || key.SequenceCompareTo(_upper) < 0 : _lower == null || key.SequenceCompareTo(_lower) >= 0;

    /// <summary>
    /// Settles on the next visible entry in the current direction from the two positions: the
    /// smaller (forward) or larger (backward) key wins, the batch on a tie; keys the batch deletes
    /// are skipped on both sides.
    /// </summary>
    private void UpdateCurrent()
    {
        _mergedValue = null;
        _deltaValueEntry = null;
        while (true)
        {
            ReadOnlySpan<byte> rep = Rep;
            while (_delta != null && BeforeStart(_delta.Key(rep)))
            {
                StepDelta();
            }
            bool deltaValid = _delta != null && BeforeEnd(_delta.Key(rep));
            bool baseValid = _base.Valid;
            _equalKeys = false;
            if (!deltaValid && !baseValid)
            {
                Valid = false;
                return;
            }
            if (deltaValid && baseValid)
            {
                int c = _base.Key.SequenceCompareTo(_delta!.Key(rep));
                if (c == 0)
                {
                    _equalKeys = true;
                }
                else if (_forward ? c < 0 : c > 0)
                {
                    _currentIsDelta = false;
                    Valid = true;
                    return;
                }
            }
            else if (!deltaValid)
            {
                _currentIsDelta = false;
                Valid = true;
                return;
            }
            if (ResolveDelta())
            {
                _currentIsDelta = true;
                Valid = true;
                return;
            }
            // The batch deletes the key: skip it on both sides.
            if (_equalKeys)
            {
                StepBase();
            }
            StepDelta();
        }
    }

    /// <summary>The delta's current key's value (with the base value under a merge); false when the batch deletes it.</summary>
    private bool ResolveDelta()
    {
        ReadOnlySpan<byte> rep = Rep;
        ReadOnlySpan<byte> key = _delta!.Key(rep);
        BatchLookupKind kind = _batch.Lookup(rep, _cf, key, out BatchIndexEntry? baseEntry);
        switch (kind)
        {
            case BatchLookupKind.Put:
                _deltaValueEntry = baseEntry;
                return true;
            case BatchLookupKind.MergeOnBatchBase:
                _mergedValue = _batch.MergeOnto(_mergeOperator, _family, rep, key, baseEntry!.Kind == BatchEntryKind.Put, baseEntry.Value(rep));
                return true;
            case BatchLookupKind.MergeOnly:
                _mergedValue = _equalKeys
                    ? _batch.MergeOnto(_mergeOperator, _family, rep, key, true, _base.Value)
                    : _batch.MergeOnto(_mergeOperator, _family, rep, key, false, default);
                return true;
            default:
                return false;
        }
    }

    private void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(_disposed, this);

    private void ThrowIfNotValid()
    {
        ThrowIfDisposed();
        if (!Valid)
        {
            throw new InvalidOperationException("The iterator is not positioned on an entry.");
        }
    }
}
