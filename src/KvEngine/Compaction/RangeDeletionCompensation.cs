using KvEngine.RangeDel;
using KvEngine.Versions;

namespace KvEngine.Compaction;

/// <summary>
/// A new file's compensated range-deletion size (RocksDB 8.0's compensated_range_deletion_size,
/// PR 10734): the bytes its tombstones may delete in the levels below its own, estimated with
/// <see cref="Versions.Version.ApproximateBytesBelow"/> over each fragment it holds, clipped to the file's
/// share of the key space. Compaction picking adds it to the file's size, so files whose tombstones
/// cover much older data are compacted down (and the data dropped) sooner. Stateless; the caller
/// keeps the version referenced.
/// </summary>
internal static class RangeDeletionCompensation
{
    public static ulong Estimate(Versions.Version version, TableCache tables, int level, FragmentedRangeTombstoneList list,
        int first, int last, byte[]? lower, byte[]? upper)
    {
        ulong total = 0;
        for (int i = first; i < last; i++)
        {
            ReadOnlySpan<byte> start = list.Start(i);
            ReadOnlySpan<byte> end = list.End(i);
            if (lower != null && start.SequenceCompareTo(lower) < 0)
            {
                start = lower;
            }
            if (upper != null && end.SequenceCompareTo(upper) > 0)
            {
                end = upper;
            }
            if (start.SequenceCompareTo(end) < 0)
            {
                total += version.ApproximateBytesBelow(tables, level, start, end);
            }
        }
        return total;
    }
}
