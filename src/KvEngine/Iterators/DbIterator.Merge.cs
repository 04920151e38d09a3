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
