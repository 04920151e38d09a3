using KvEngine.Format;
using KvEngine.Util;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Table;

/// <summary>
/// Index separators (RocksDB's BytewiseComparator FindShortestSeparator / FindShortSuccessor and
/// InternalKeyComparator's wrappers): a short key k with last &lt;= k &lt; next. A shortened
/// internal separator gets the trailer (kMaxSequenceNumber, kValueTypeForSeek), the smallest
/// internal key for its user key. Stateless and thread-safe.
/// </summary>
internal static class KeyShortening
{
    private static readonly ulong s_seekTrailer = InternalKeys.PackTrailer(InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek);

    /// <summary>Writes to <paramref name="output"/> a user key in [start, limit) that is as short as the rule allows.</summary>
    public static void ShortestSeparator(ReadOnlySpan<byte> start, ReadOnlySpan<byte> limit, ByteBuffer output)
    {
        output.Append(start);
        int min = Math.Min(start.Length, limit.Length);
        int diff = start.CommonPrefixLength(limit);
        if (diff >= min)
        {
            return; // one is a prefix of the other
        }
        byte s = start[diff];
        byte l = limit[diff];
        if (s >= l)
        {
            return;
        }
        Span<byte> k = output.WrittenSpanMutable[^start.Length..];
        int baseLength = output.Length - start.Length;
        if (diff < limit.Length - 1 || s + 1 < l)
        {
            k[diff]++;
            output.Truncate(baseLength + diff + 1);
            return;
        }
        // start[diff] + 1 == limit[diff] and limit ends there: bump the first non-0xFF byte after diff.
        for (int i = diff + 1; i < start.Length; i++)
        {
            if (k[i] < 0xFF)
            {
                k[i]++;
                output.Truncate(baseLength + i + 1);
                return;
            }
        }
    }

    /// <summary>Writes to <paramref name="output"/> a short user key &gt;= <paramref name="key"/>.</summary>
    public static void ShortSuccessor(ReadOnlySpan<byte> key, ByteBuffer output)
    {
        int baseLength = output.Length;
        output.Append(key);
        Span<byte> k = output.WrittenSpanMutable[baseLength..];
        for (int i = 0; i < k.Length; i++)
        {
            if (k[i] != 0xFF)
            {
                k[i]++;
                output.Truncate(baseLength + i + 1);
                return;
            }
        }
    }

    /// <summary>The index separator between two blocks, as an internal key, into <paramref name="output"/>.</summary>
    public static void InternalSeparator(ReadOnlySpan<byte> lastInBlock, ReadOnlySpan<byte> firstInNext, ByteBuffer output)
    {
        ReadOnlySpan<byte> userStart = InternalKeys.UserKey(lastInBlock);
        int baseLength = output.Length;
        ShortestSeparator(userStart, InternalKeys.UserKey(firstInNext), output);
        FinishInternal(lastInBlock, userStart, output, baseLength);
    }

    /// <summary>The index key after the last block, as an internal key, into <paramref name="output"/>.</summary>
    public static void InternalSuccessor(ReadOnlySpan<byte> lastInBlock, ByteBuffer output)
    {
        ReadOnlySpan<byte> userStart = InternalKeys.UserKey(lastInBlock);
        int baseLength = output.Length;
        ShortSuccessor(userStart, output);
        FinishInternal(lastInBlock, userStart, output, baseLength);
    }

    private static void FinishInternal(ReadOnlySpan<byte> original, ReadOnlySpan<byte> userStart, ByteBuffer output, int baseLength)
    {
        ReadOnlySpan<byte> shortened = output.WrittenSpan[baseLength..];
        if (shortened.Length <= userStart.Length && userStart.SequenceCompareTo(shortened) < 0)
        {
            output.AppendFixed64(s_seekTrailer);
            return;
        }
        output.Truncate(baseLength);
        output.Append(original);
    }
}
