using KvEngine.Format;
using KvEngine.RangeDel;
using KvEngine.Table;

using ValueType = KvEngine.Format.ValueType;
using KvEngine.Versions;

namespace KvEngine.Compaction;

// range_del_block := entry*                  (a Block, restart interval 1, never compressed)
// entry           := key: start_user_key ++ fixed64((seq << 8) | 0x0F)   value: end_user_key
// Fragments in key order, disjoint; within a fragment one entry per kept sequence, newest first,
// so the keys strictly increase in internal-key order. See docs/formats/table.md.

/// <summary>
/// Writes fragmented tombstones into a table's range_del block, in internal-key order: fragment by
/// fragment (they are sorted and disjoint), each sequence newest first, as
/// <c>start@seq:RangeDeletion -&gt; end</c> (RocksDB's flush and compaction outputs). Stateless.
/// </summary>
internal static class RangeTombstoneWriter
{
    /// <summary>
    /// Adds every fragment of <paramref name="list"/> from <paramref name="first"/> up to (not
    /// including) <paramref name="last"/>; reports the smallest start key written, the sentinel of
    /// the largest end, and the sequence range.
    /// </summary>
    public static void Add(TableBuilder builder, FragmentedRangeTombstoneList list, int first, int last,
        out byte[] smallest, out byte[] largest, out ulong minSeq, out ulong maxSeq)
    {
        minSeq = ulong.MaxValue;
        maxSeq = 0;
        smallest = [];
        byte[]? key = null;
        for (int i = first; i < last; i++)
        {
            ReadOnlySpan<byte> start = list.Start(i);
            if (key == null || key.Length != start.Length + InternalKeys.TrailerSize)
            {
                key = new byte[start.Length + InternalKeys.TrailerSize];
            }
            foreach (ulong seq in list.Sequences(i))
            {
                InternalKeys.Encode(key, start, seq, ValueType.RangeDeletion);
                builder.AddRangeTombstone(key, list.End(i));
                if (i == first && smallest.Length == 0)
                {
                    smallest = (byte[])key.Clone();
                }
                minSeq = Math.Min(minSeq, seq);
                maxSeq = Math.Max(maxSeq, seq);
            }
        }
        largest = Sentinel(list.End(last - 1));
    }

    /// <summary><see cref="Add"/> for the whole list.</summary>
    public static void AddAll(TableBuilder builder, FragmentedRangeTombstoneList list,
        out byte[] smallest, out byte[] largest, out ulong minSeq, out ulong maxSeq) =>
        Add(builder, list, 0, list.Count, out smallest, out largest, out minSeq, out maxSeq);

    /// <summary>The sentinel internal key of an exclusive end: end@(2^56 - 1):RangeDeletion.</summary>
    public static byte[] Sentinel(ReadOnlySpan<byte> endUserKey)
    {
        var key = new byte[endUserKey.Length + InternalKeys.TrailerSize];
        endUserKey.CopyTo(key);
        System.Buffers.Binary.BinaryPrimitives.WriteUInt64LittleEndian(key.AsSpan(endUserKey.Length), FileBounds.SentinelTrailer);
        return key;
    }
}
