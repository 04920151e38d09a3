using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Merge;
using KvEngine.RangeDel;
using KvEngine.Util;

using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Compaction;

/// <summary>
/// The merge step of flushes and compactions (RocksDB's MergeHelper::MergeUntil inside its
/// CompactionIterator): a forward-only view of a flush's or compaction's input, in internal-key
/// order, in which each run of merge operands of one user key within one snapshot stripe is
/// replaced by what RocksDB writes for it; every other entry passes through unchanged.
/// <para>
/// At a Merge entry that no range tombstone deletes, the operands of the key are collected newest
/// first until the next user key, an entry of an older snapshot stripe (merging never crosses a
/// snapshot boundary, so every snapshot keeps reading what it read), an entry a range tombstone
/// deletes, or a base:
/// <list type="bullet">
/// <item>a Value: full merge with it, written as one Value at the newest operand's sequence number;
/// the base is consumed (it was shadowed anyway);</item>
/// <item>a Deletion / SingleDeletion, or a range-deleted entry: full merge without a base, one Value
/// (a consumed deletion; a range-deleted entry is left for the caller to drop);</item>
/// <item>the key's end when nothing older can exist below (<c>probe</c> says so; never in a flush):
/// full merge without a base;</item>
/// <item>otherwise, two or more operands: a partial merge into one Merge at the newest sequence
/// number, or, when the operator declines, the operands unchanged.</item>
/// </list>
/// A SingleDeletion followed by an entry of the same user key in the same stripe is dropped with
/// it (RocksDB's rule: the single deletion met its one Put); across a snapshot boundary both stay.
/// The results go on through the caller's <see cref="SnapshotStripeFilter"/> (which keeps a run of
/// operands in one stripe), range-deletion check and compaction filter (a merged Value is filtered
/// like any value). A failed full merge raises <see cref="KvCorruptionException"/>, operands
/// without an operator <see cref="KvException"/>: the flush or compaction fails.
/// </para>
/// Owns nothing but its buffers (the caller disposes the input). Not thread-safe; one per job.
/// </summary>
internal sealed class CompactionMergeInput : IDisposable
{
    private readonly InternalIterator _input;
    private readonly KvMergeOperator? _operator;
    private readonly SnapshotStripeFilter _stripes;
    private readonly CompactionRangeDelAggregator? _rangeDel;
    private readonly DeeperLevelsProbe? _probe;
    private readonly MergeContext _operands = new();
    private readonly ByteBuffer _userKey = new(64);
    private readonly ByteBuffer _key = new(64);
    private readonly ByteBuffer _result = new(64);
    private ulong[] _sequences = new ulong[8]; // of the operands, newest first
    private int _queued; // entries to yield from the buffers; 0 while passing the input through
    private int _position;
    private bool _queuedMerged; // the queue is one merged entry (_result), not the operands

    /// <param name="input">The flush's or compaction's input, in internal-key order.</param>
    /// <param name="mergeOperator">The configured operator; null fails at the first operand.</param>
    /// <param name="stripes">The job's stripe filter (for the snapshot stripes).</param>
    /// <param name="rangeDel">The job's range tombstones, or null.</param>
    /// <param name="probe">Whether deeper levels may hold a key; null: they may (flushes).</param>
    public CompactionMergeInput(InternalIterator input, KvMergeOperator? mergeOperator, SnapshotStripeFilter stripes,
        CompactionRangeDelAggregator? rangeDel, DeeperLevelsProbe? probe)
    {
        _input = input;
        _operator = mergeOperator;
        _stripes = stripes;
        _rangeDel = rangeDel is { HasTombstones: true } ? rangeDel : null;
        _probe = probe;
    }

    /// <summary>Merge runs replaced by a full merge.</summary>
    public long FullMerges { get; private set; }

    /// <summary>Merge runs replaced by a partial merge.</summary>
    public long PartialMerges { get; private set; }

    /// <summary>SingleDeletions dropped with the entry they met (RocksDB's num_record_drop_hidden for them).</summary>
    public long SingleDeletePairsDropped { get; private set; }

    /// <summary>SingleDeletions that met something other than a Value (RocksDB's num_single_del_mismatch).</summary>
    public long SingleDeleteMismatches { get; private set; }

    /// <summary>Operands read from the input (a measure of the merge work).</summary>
    public long OperandsIn { get; private set; }

    public bool Valid => _queued > 0 || _input.Valid;

    public ReadOnlySpan<byte> Key => _queued > 0 ? _key.WrittenSpan : _input.Key;

    public ReadOnlySpan<byte> Value => _queued > 0 ? (_queuedMerged ? _result.WrittenSpan : _operands[_queued - 1 - _position].Span) : _input.Value;

    public void SeekToFirst()
    {
        _queued = 0;
        _input.SeekToFirst();
        Prepare();
    }

    public void Next()
    {
        if (_queued > 0)
        {
            if (++_position < _queued)
            {
                SetKey(_sequences[_position], ValueType.Merge);
                return;
            }
            _queued = 0;
        }
        else
        {
            _input.Next();
        }
        Prepare();
    }

    public void Dispose()
    {
        _userKey.Dispose();
        _key.Dispose();
        _result.Dispose();
    }

    // At a new input entry: a Merge that no tombstone deletes starts a merge run; a SingleDeletion
    // looks at the next entry (RocksDB's CompactionIterator).
    private void Prepare()
    {
        while (_input.Valid)
        {
            ReadOnlySpan<byte> ikey = _input.Key;
            ValueType type = InternalKeys.Type(ikey);
            if (type == ValueType.SingleDeletion)
            {
                if (SingleDeletionConsumed())
                {
                    continue;
                }
                return;
            }
            if (type != ValueType.Merge || (_rangeDel != null && _rangeDel.ShouldDelete(ikey)))
            {
                return;
            }
            MergeUntil();
            return;
        }
    }

    // The input is at a SingleDeletion. When the next entry is of the same user key and snapshot
    // stripe, both go (another SingleDeletion: only the first goes, the second is examined next)
    // and this returns true, the input at the entry after them. Otherwise the deletion is queued,
    // the input at the next entry, and this returns false. RocksDB keeps both when a snapshot lies
    // between them, and likewise drops whatever type the next entry is (the mixes are undefined).
    private bool SingleDeletionConsumed()
    {
        ReadOnlySpan<byte> first = _input.Key;
        _userKey.Clear();
        _userKey.Append(InternalKeys.UserKey(first));
        ulong sequence = InternalKeys.Sequence(first);
        int stripe = _stripes.StripeOf(sequence);
        _input.Next();
        if (_input.Valid)
        {
            ReadOnlySpan<byte> next = _input.Key;
            if (InternalKeys.UserKey(next).SequenceEqual(_userKey.WrittenSpan) && _stripes.StripeOf(InternalKeys.Sequence(next)) == stripe)
            {
                ValueType nextType = InternalKeys.Type(next);
                if (nextType != ValueType.Value)
                {
                    SingleDeleteMismatches++;
                }
                if (nextType != ValueType.SingleDeletion)
                {
                    SingleDeletePairsDropped++;
                    _input.Next();
                }
                return true;
            }
        }
        _result.Clear();
        Queue(merged: true, 1, sequence, ValueType.SingleDeletion);
        return false;
    }

    private void MergeUntil()
    {
        ReadOnlySpan<byte> first = _input.Key;
        ReadOnlySpan<byte> userKey = InternalKeys.UserKey(first);
        if (_operator is null)
        {
            throw MergeHelper.NotInitialized(userKey);
        }
        _userKey.Clear();
        _userKey.Append(userKey);
        ulong newest = InternalKeys.Sequence(first);
        int stripe = _stripes.StripeOf(newest);
        _operands.Clear();
        _result.Clear();
        int count = 0;
        Push(ref count, newest, _input.Value);
        _input.Next();
        bool keyEnded = true; // false: stopped at an older snapshot stripe
        while (_input.Valid)
        {
            ReadOnlySpan<byte> ikey = _input.Key;
            if (!InternalKeys.UserKey(ikey).SequenceEqual(_userKey.WrittenSpan))
            {
                break;
            }
            ulong sequence = InternalKeys.Sequence(ikey);
            if (_stripes.StripeOf(sequence) != stripe)
            {
                keyEnded = false;
                break;
            }
            if (_rangeDel != null && _rangeDel.ShouldDelete(ikey))
            {
                FullMerge(newest, hasBase: false, default); // it and everything older in the stripe are deleted
                return;
            }
            var type = InternalKeys.Type(ikey);
            switch (type)
            {
                case ValueType.Merge:
                    Push(ref count, sequence, _input.Value);
                    _input.Next();
                    continue;
                case ValueType.Value:
                    FullMerge(newest, hasBase: true, _input.Value);
                    _input.Next();
                    return;
                case ValueType.Deletion:
                case ValueType.SingleDeletion:
                    FullMerge(newest, hasBase: false, default);
                    _input.Next();
                    return;
                default:
                    throw new KvCorruptionException($"Unexpected value type 0x{(byte)type:x2} in a compaction input.");
            }
        }
        if (keyEnded && _probe != null && _probe.KeyNotExistsBeyondOutputLevel(_userKey.WrittenSpan))
        {
            FullMerge(newest, hasBase: false, default); // nothing older exists anywhere
            return;
        }
        if (count >= 2 && MergeHelper.PartialMerge(_operator, _userKey.WrittenSpan, _operands, _result))
        {
            PartialMerges++;
            Queue(merged: true, 1, newest, ValueType.Merge);
            return;
        }
        _result.Clear(); // a declining operator may have written part of a result
        Queue(merged: false, count, newest, ValueType.Merge);
    }

    private void Push(ref int count, ulong sequence, ReadOnlySpan<byte> operand)
    {
        if (count == _sequences.Length)
        {
            Array.Resize(ref _sequences, count * 2);
        }
        _sequences[count++] = sequence;
        _operands.PushOlder(operand);
        OperandsIn++;
    }

    private void FullMerge(ulong newest, bool hasBase, ReadOnlySpan<byte> baseValue)
    {
        MergeHelper.FullMerge(_operator, _userKey.WrittenSpan, hasBase, baseValue, _operands, _result);
        FullMerges++;
        Queue(merged: true, 1, newest, ValueType.Value);
    }

    private void Queue(bool merged, int count, ulong newest, ValueType type)
    {
        _queuedMerged = merged;
        _queued = count;
        _position = 0;
        SetKey(newest, type);
    }

    private void SetKey(ulong sequence, ValueType type)
    {
        _key.Clear();
        _key.Append(_userKey.WrittenSpan);
        _key.AppendFixed64(InternalKeys.PackTrailer(sequence, type));
    }
}
