using KvEngine.Format;
using KvEngine.Merge;
using KvEngine.Util;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Db.Read;

/// <summary>Merging a key's operands (RocksDB's DBIter::MergeValuesNewToOld).</summary>
internal sealed partial class DbIterator
{
    private readonly KvMergeOperator? _mergeOperator;
    private MergeContext? _operands; // created on the first merge, reused
    private ByteBuffer? _mergeResult;
    private MergeContext? _keptOperands; // reverse: the operands newer than a range tombstone
    private ulong[]? _operandSequences; // reverse: sequences of _operands, oldest first

    // Reverse: the walk back over _savedKey's entries collected the visible operands newer than the
    // newest visible non-merge entry (oldest first, their sequences in _operandSequences) and, when
    // that entry is a Value, saved it in _savedValue; the newest visible entry is a live Merge
    // (RocksDB's FindValueForCurrentKey). With range tombstones, the operands and base are checked
    // newest to oldest: a tombstone deleting one deletes everything older too, so the first deleted
    // one cuts the list (no base then).
    private void MergeBackward(MergeContext operands, bool baseIsValue, ulong baseSequence)
    {
        ReadOnlySpan<byte> key = _savedKey.WrittenSpan;
        if (_rangeDel is not null)
        {
            int firstKept = 0;
            for (int i = operands.Count - 2; i >= 0; i--) // the newest was checked by IsLiveValue
            {
                if (_rangeDel.ShouldDelete(ScratchKey(key, _operandSequences![i], ValueType.Merge)))
                {
                    firstKept = i + 1;
                    baseIsValue = false;
                    break;
                }
            }
            if (baseIsValue && _rangeDel.ShouldDelete(ScratchKey(key, baseSequence, ValueType.Value)))
            {
                baseIsValue = false;
            }
            if (firstKept > 0)
            {
                MergeContext kept = _keptOperands ??= new MergeContext();
                kept.Clear();
                for (int i = firstKept; i < operands.Count; i++)
                {
                    kept.PushNewer(operands[i].Span);
                }
                operands.Clear();
                operands = kept;
            }
        }
        ByteBuffer result = _mergeResult ??= new ByteBuffer(64);
        result.Clear();
        MergeHelper.FullMerge(_mergeOperator, key, baseIsValue, baseIsValue ? _savedValue.WrittenSpan : default, operands, result);
        _savedValue.Clear();
        _savedValue.Append(result.WrittenSpan);
        operands.Clear();
    }

    private void PushOperandSequence(int index, ulong sequence)
    {
        _operandSequences ??= new ulong[8];
        if (index == _operandSequences.Length)
        {
            Array.Resize(ref _operandSequences, index * 2);
        }
        _operandSequences[index] = sequence;
    }

    // The internal iterator is at the newest visible entry of _savedKey, a live (not range-deleted)
    // Merge. Collects it and the key's older operands, newest first, until a Value (the base), a
    // Deletion or an entry a range tombstone deletes (no base), or the key's end; full-merges into
    // _savedValue. Leaves the internal iterator past the entries it consumed (a consumed base or
    // deletion included); entries of the key left behind are older and hidden.
    private void MergeForward()
    {
        MergeContext operands = _operands ??= new MergeContext();
        ByteBuffer result = _mergeResult ??= new ByteBuffer(64);
        operands.Clear();
        result.Clear();
        operands.PushOlder(_iter.Value);
        _iter.Next();
        bool merged = false;
        while (_iter.Valid)
        {
            ReadOnlySpan<byte> ikey = _iter.Key;
            if (!UserKeyOf(ikey).SequenceEqual(_savedKey.WrittenSpan))
            {
                break;
            }
            var type = InternalKeys.Type(ikey);
            if (type is ValueType.Value or ValueType.Merge && _rangeDel is not null && _rangeDel.ShouldDelete(ikey))
            {
                break; // deleted by a range tombstone, with everything older: no base
            }
            if (type == ValueType.Merge)
            {
                operands.PushOlder(_iter.Value);
                _iter.Next();
                continue;
            }
            if (type == ValueType.Value)
            {
                MergeHelper.FullMerge(_mergeOperator, _savedKey.WrittenSpan, hasBase: true, _iter.Value, operands, result);
                merged = true;
            }
            else if (type is not (ValueType.Deletion or ValueType.SingleDeletion))
            {
                throw new KvCorruptionException($"Unexpected value type 0x{(byte)type:x2} in an internal key.");
            }
            _iter.Next();
            break;
        }
        if (!merged)
        {
            MergeHelper.FullMerge(_mergeOperator, _savedKey.WrittenSpan, hasBase: false, default, operands, result);
        }
        _savedValue.Clear();
        _savedValue.Append(result.WrittenSpan);
        operands.Clear();
    }
}
