using KvEngine.Format;
using KvEngine.Merge;
using KvEngine.Util;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Iterators;

/// <summary>Merging a key's operands (RocksDB's DBIter::MergeValuesNewToOld).</summary>
internal sealed partial class DbIterator
{
    private readonly KvMergeOperator? _mergeOperator;
    private MergeContext? _operands; // created on the first merge, reused
    private ByteBuffer? _mergeResult;

    // Reverse: the walk back over _savedKey's entries collected the visible operands newer than the
    // newest visible non-merge entry (oldest first) and, when that entry is a Value, saved it in
    // _savedValue; the newest visible entry is a live Merge. Without range tombstones they are
    // merged here (RocksDB's FindValueForCurrentKey). With them, an older entry may be deleted by a
    // tombstone the walk did not check: merge forward from the newest visible entry instead (range
    // tombstones checked per entry), then seek back before the key's entries.
    private void MergeBackward(MergeContext operands, bool baseIsValue)
    {
        if (_rangeDel is null)
        {
            ByteBuffer result = _mergeResult ??= new ByteBuffer(64);
            result.Clear();
            MergeHelper.FullMerge(_mergeOperator, _savedKey.WrittenSpan, baseIsValue, baseIsValue ? _savedValue.WrittenSpan : default, operands, result);
            _savedValue.Clear();
            _savedValue.Append(result.WrittenSpan);
            operands.Clear();
            return;
        }
        _iter.Seek(ScratchKey(_savedKey.WrittenSpan, _sequence, ValueType.ValueTypeForSeek));
        MergeForward();
        _iter.SeekForPrev(ScratchKey(_savedKey.WrittenSpan, InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek));
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
