using KvEngine.Format;

using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Versions;

/// <summary>
/// A table file's key range as range tombstones shape it (RocksDB's FileMetaData boundaries and
/// TruncatedRangeDelIterator). A file whose tombstone runs past its last point key records as its
/// largest key the <em>sentinel</em> (end user key, 2^56 - 1, RangeDeletion): it sorts before every
/// real entry of that user key, so the file does not claim the exclusive end, and the next file of
/// the level may start at the same user key. Stateless and thread-safe.
/// </summary>
internal static class FileBounds
{
    /// <summary>The trailer of a sentinel largest key: bytes 0F FF FF FF FF FF FF FF.</summary>
    public static readonly ulong SentinelTrailer = InternalKeys.PackTrailer(InternalKeys.MaxSequenceNumber, ValueType.RangeDeletion);

    /// <summary>True when <paramref name="largest"/> is a range tombstone's exclusive end (the sentinel).</summary>
    public static bool IsSentinel(ReadOnlySpan<byte> largest) =>
        largest.Length >= InternalKeys.TrailerSize && InternalKeys.Trailer(largest) == SentinelTrailer;

    /// <summary>True when the file may hold entries of, or tombstones covering, <paramref name="userKey"/>.</summary>
    public static bool Contains(FileMetaData f, ReadOnlySpan<byte> userKey)
    {
        if (InternalKeys.UserKey(f.Smallest).SequenceCompareTo(userKey) > 0)
        {
            return false;
        }
        int c = userKey.SequenceCompareTo(InternalKeys.UserKey(f.Largest));
        return c < 0 || (c == 0 && !IsSentinel(f.Largest));
    }

    /// <summary>
    /// The user-key range [lower, upper) to clip the file's tombstones to: from its smallest user
    /// key to its largest (exclusive for a sentinel, else inclusive: the largest user key followed by
    /// a zero byte, its immediate successor).
    /// </summary>
    public static void RangeTombstoneClip(FileMetaData f, out byte[] lower, out byte[] upper)
    {
        lower = InternalKeys.UserKey(f.Smallest).ToArray();
        ReadOnlySpan<byte> largestUser = InternalKeys.UserKey(f.Largest);
        if (IsSentinel(f.Largest))
        {
            upper = largestUser.ToArray();
        }
        else
        {
            upper = new byte[largestUser.Length + 1];
            largestUser.CopyTo(upper);
        }
    }
}
