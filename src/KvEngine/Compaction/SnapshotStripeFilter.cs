using KvEngine.Format;
using KvEngine.Util;

using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Compaction;

/// <summary>
/// Decides, for the entries of a compaction in internal-key order (user key ascending, newest
/// first), which to keep (RocksDB's CompactionIterator's visibility rules; merge runs are resolved
/// before, by <see cref="CompactionMergeInput"/>).
/// <para>
/// The live snapshots s0 &lt; s1 &lt; ... cut the sequence numbers into stripes: an entry with
/// sequence q belongs to the stripe of the first snapshot &gt;= q, or to the stripe after the last
/// snapshot. Readers at a snapshot see the newest entry of each key at or below it, so of the
/// entries of one user key, only the newest in each stripe can ever be read: every other one is
/// dropped. A deletion is dropped too when every snapshot sees it (its sequence is at most the
/// earliest snapshot) and no level below the output can hold the key, since then nothing remains
/// for it to hide; the older entries of its stripe go with it. Merge operands: a run of operands at
/// the top of a stripe (what <see cref="CompactionMergeInput"/> leaves when it cannot merge
/// them) is kept whole, since together they make the stripe's newest value; an entry after a
/// non-merge entry of its stripe is shadowed as usual. Operands are never dropped as deletions.
/// A SingleDeletion that reaches this filter met no entry of its stripe below it (
/// <see cref="CompactionMergeInput"/> dropped it with that entry otherwise), so it is kept
/// even under a newer entry of its stripe, as RocksDB's CompactionIterator keeps it: the key may be
/// written again after a single deletion, and dropping the deletion would let the older value
/// below it come back when the newer pair goes.
/// </para>
/// Not thread-safe; one per compaction.
/// </summary>
internal sealed class SnapshotStripeFilter : IDisposable
{
    private readonly ulong[] _snapshots;
    private readonly ulong _earliestSnapshot;
    private readonly ByteBuffer _userKey = new(64);
    private bool _hasKey;
    private int _lastStripe;
    private bool _stripeAllMerges; // every kept entry of the current key's current stripe is a Merge

    /// <param name="snapshotsAscending">Sequence numbers of the live snapshots, ascending.</param>
    public SnapshotStripeFilter(ulong[] snapshotsAscending)
    {
        _snapshots = snapshotsAscending;
        _earliestSnapshot = snapshotsAscending.Length > 0 ? snapshotsAscending[0] : InternalKeys.MaxSequenceNumber;
    }

    /// <summary>Entries dropped because a newer entry of the same stripe hides them.</summary>
    public long DroppedShadowed { get; private set; }

    /// <summary>Deletions dropped at the bottom of the tree.</summary>
    public long DroppedDeletions { get; private set; }

    /// <summary>The stripe of sequence number <paramref name="sequence"/>.</summary>
    public int StripeOf(ulong sequence)
    {
        int lo = 0;
        int hi = _snapshots.Length;
        while (lo < hi)
        {
            int mid = (lo + hi) >>> 1;
            if (_snapshots[mid] < sequence)
            {
                lo = mid + 1;
            }
            else
            {
                hi = mid;
            }
        }
        return lo;
    }

    /// <summary>
    /// True to write the entry out. <paramref name="deeper"/> answers whether levels below the
    /// output may hold a user key; null means they may (never drop deletions).
    /// </summary>
    public bool ShouldKeep(ReadOnlySpan<byte> internalKey, DeeperLevelsProbe? deeper)
    {
        ReadOnlySpan<byte> userKey = InternalKeys.UserKey(internalKey);
        ulong trailer = InternalKeys.Trailer(internalKey);
        ulong sequence = trailer >> 8;
        var type = (ValueType)(byte)trailer;
        if (type is not (ValueType.Value or ValueType.Deletion or ValueType.SingleDeletion or ValueType.Merge))
        {
            throw new KvNotSupportedException($"A table holds an entry of type {(int)type}, which compaction does not support.");
        }
        int stripe = StripeOf(sequence);
        if (_hasKey && userKey.SequenceEqual(_userKey.WrittenSpan))
        {
            if (stripe == _lastStripe && type != ValueType.SingleDeletion)
            {
                if (type == ValueType.Merge && _stripeAllMerges)
                {
                    return true; // the next operand of an unmerged run
                }
                _stripeAllMerges = false;
                DroppedShadowed++;
                return false;
            }
        }
        else
        {
            _userKey.Clear();
            _userKey.Append(userKey);
            _hasKey = true;
        }
        _lastStripe = stripe;
        _stripeAllMerges = type == ValueType.Merge;
        if (type is ValueType.Deletion or ValueType.SingleDeletion && sequence <= _earliestSnapshot && deeper != null && deeper.KeyNotExistsBeyondOutputLevel(userKey))
        {
            DroppedDeletions++;
            return false;
        }
        return true;
    }

    public void Dispose() => _userKey.Dispose();
}
