using KvEngine.Format;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Db.Read;

/// <summary>Deciding whether a newest visible entry is live, and skipping past range tombstones.</summary>
internal sealed partial class DbIterator
{
    // Range-deletion skip (RocksDB's skip to the tombstone's end): the key just hidden is covered by
    // a tombstone fragment from child r of the merging iterator; every child after r holds only
    // older entries, all deleted within the fragment, so they move past it at once instead of
    // being stepped over key by key. Children up to r go on entry by entry (their entries may be
    // newer than the tombstone). True when something may have moved.
    private bool SkipCoveredChildren(bool forward)
    {
        if (_merging is null || !_iter.Valid ||
            !_rangeDel!.TryGetLastCover(out int child, out ReadOnlySpan<byte> start, out ReadOnlySpan<byte> end) ||
            child + 1 >= _merging.ChildCount)
        {
            return false;
        }
        _merging.SkipChildren(child + 1, forward
            ? ScratchKey(end, InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek)
            : ScratchKey(start, InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek));
        return true;
    }

    // Whether a visible entry of this type makes its user key present (it is the newest visible one).
    private bool IsLiveValue(ValueType type, ReadOnlySpan<byte> ikey)
    {
        _coveredByRange = false;
        switch (type)
        {
            case ValueType.Value:
                if (_rangeDel is not null && _rangeDel.ShouldDelete(ikey))
                {
                    _coveredByRange = true;
                    return false;
                }
                return true;
            case ValueType.Deletion:
            case ValueType.SingleDeletion:
                return false;
            case ValueType.Merge:
                if (_rangeDel is not null && _rangeDel.ShouldDelete(ikey))
                {
                    _coveredByRange = true;
                    return false;
                }
                return true; // the caller merges (MergeForward)
            default:
                throw new KvCorruptionException($"Unexpected value type 0x{(byte)type:x2} in an internal key.");
        }
    }
}
