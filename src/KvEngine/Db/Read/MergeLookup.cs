using System.Buffers;
using KvEngine.Db.State;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Memtable;
using KvEngine.Merge;
using KvEngine.Table;
using KvEngine.Util;
using KvEngine.Versions;

using ValueType = KvEngine.Format.ValueType;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Db.Read;

/// <summary>
/// The point lookup of a key whose newest visible entry is a merge operand (RocksDB's Get with a
/// MergeContext): walks the key's entries newest first through the mutable memtable, the immutable
/// memtables and the tables (the <see cref="FilePicker"/>'s walk, as Get's), pushing operands
/// until a Value (the base), a Deletion / SingleDeletion or an entry a range tombstone covers (no
/// base), or the end of the history; then full-merges into the caller's buffer. The regular lookup
/// sends only these keys here, so plain reads keep their fast path.
/// <para>
/// Range tombstones: as in the regular lookup (the picker's <see cref="FilePicker.Cover"/> for the
/// tables), each source's tombstones raise the covering sequence
/// before its entries are read; an entry older than it is deleted, and once a source covers the key
/// every older source holds only older entries, so the walk ends there.
/// </para>
/// Thread-safe: the operand stack is per thread; the read state is pinned by the caller.
/// </summary>
internal static class MergeLookup
{
    [ThreadStatic]
    private static MergeContext? t_operands;

    /// <summary>
    /// Looks <paramref name="userKey"/> up at <paramref name="sequence"/> in <paramref name="state"/>,
    /// merging its operands. True when the key has a value (written to <paramref name="value"/>).
    /// </summary>
    public static bool TryGet(ReadState state, TableCache tables, KvMergeOperator? op, ReadOnlySpan<byte> userKey, ulong sequence,
        IBufferWriter<byte> value, bool verifyChecksums, bool fillCache)
    {
        MergeContext operands = t_operands ??= new MergeContext();
        operands.Clear();
        try
        {
            ulong covering = 0;
            bool found;
            if (Walk(state.Mem, userKey, sequence, operands, op, value, ref covering, out found))
            {
                return found;
            }
            foreach (MemTable imm in state.Immutable)
            {
                if (Walk(imm, userKey, sequence, operands, op, value, ref covering, out found))
                {
                    return found;
                }
            }
            if (WalkVersion(state.Version, tables, userKey, sequence, operands, op, value, verifyChecksums, fillCache, covering, out found))
            {
                return found;
            }
            return Finish(op, userKey, operands, value); // the end of the history: no base
        }
        finally
        {
            operands.Clear();
        }
    }

    // One memtable; true when it decided the lookup.
    private static bool Walk(MemTable mem, ReadOnlySpan<byte> userKey, ulong sequence, MergeContext operands, KvMergeOperator? op,
        IBufferWriter<byte> value, ref ulong covering, out bool found)
    {
        if (mem.GetRangeTombstones() is { } tombstones)
        {
            covering = Math.Max(covering, tombstones.MaxCoveringSequence(userKey, sequence));
        }
        SkipList.Iterator it = mem.SeekVersions(userKey, sequence);
        for (; it.Valid; it.Next())
        {
            ReadOnlySpan<byte> ikey = it.Key;
            if (!InternalKeys.UserKey(ikey).SequenceEqual(userKey))
            {
                break;
            }
            if (Feed(ikey, it.Value, covering, operands, op, userKey, value, out found))
            {
                return true;
            }
        }
        return CoveredEnd(op, userKey, operands, value, covering, out found);
    }

    // The tables, through Get's file walk; true when a table decided the lookup.
    private static bool WalkVersion(Version v, TableCache tables, ReadOnlySpan<byte> userKey, ulong sequence, MergeContext operands,
        KvMergeOperator? op, IBufferWriter<byte> value, bool verifyChecksums, bool fillCache, ulong covering, out bool found)
    {
        var picker = new FilePicker(v, userKey, sequence, covering);
        while (picker.Next(out FileMetaData? file))
        {
            TableReader reader = tables.Get(file, picker.Level);
            picker.Cover(reader);
            if (WalkTable(reader, userKey, sequence, operands, op, value, verifyChecksums, fillCache, picker.Covering, out found))
            {
                return true;
            }
        }
        found = false;
        return false;
    }

    // One table's entries of the key, newest first, under the covering sequence the picker raised with its tombstones.
    private static bool WalkTable(TableReader reader, ReadOnlySpan<byte> userKey, ulong sequence, MergeContext operands, KvMergeOperator? op,
        IBufferWriter<byte> value, bool verifyChecksums, bool fillCache, ulong covering, out bool found)
    {
        if (reader.KeyMayMatch(userKey, fillCache))
        {
            int seekLength = userKey.Length + InternalKeys.TrailerSize;
            byte[] seek = ArrayPool<byte>.Shared.Rent(seekLength);
            InternalKeys.Encode(seek, userKey, sequence, ValueType.ValueTypeForSeek);
            using InternalIterator it = reader.NewIterator(verifyChecksums, fillCache);
            try
            {
                for (it.Seek(seek.AsSpan(0, seekLength)); it.Valid; it.Next())
                {
                    ReadOnlySpan<byte> ikey = it.Key;
                    if (!InternalKeys.UserKey(ikey).SequenceEqual(userKey))
                    {
                        break;
                    }
                    if (Feed(ikey, it.Value, covering, operands, op, userKey, value, out found))
                    {
                        return true;
                    }
                }
            }
            finally
            {
                ArrayPool<byte>.Shared.Return(seek);
            }
        }
        return CoveredEnd(op, userKey, operands, value, covering, out found);
    }

    // One visible entry of the key, newest first; true when it decides the lookup.
    private static bool Feed(ReadOnlySpan<byte> ikey, ReadOnlySpan<byte> entryValue, ulong covering, MergeContext operands, KvMergeOperator? op,
        ReadOnlySpan<byte> userKey, IBufferWriter<byte> value, out bool found)
    {
        ulong trailer = InternalKeys.Trailer(ikey);
        var type = (ValueType)(byte)trailer;
        if ((trailer >> 8) < covering)
        {
            type = ValueType.Deletion; // a range tombstone deletes it and everything older
        }
        switch (type)
        {
            case ValueType.Merge:
                operands.PushOlder(entryValue);
                found = false;
                return false;
            case ValueType.Value:
                if (operands.Count == 0)
                {
                    BufferWriterCopy.WriteWhole(value, entryValue);
                }
                else
                {
                    MergeHelper.FullMerge(op, userKey, hasBase: true, entryValue, operands, value);
                }
                found = true;
                return true;
            case ValueType.Deletion:
            case ValueType.SingleDeletion:
                found = Finish(op, userKey, operands, value);
                return true;
            default:
                throw new KvCorruptionException($"Unexpected entry type 0x{(byte)type:x2} for key {Convert.ToHexString(userKey)}.");
        }
    }

    // After a source: a covering tombstone ends the walk (older sources hold only deleted entries).
    private static bool CoveredEnd(KvMergeOperator? op, ReadOnlySpan<byte> userKey, MergeContext operands, IBufferWriter<byte> value,
        ulong covering, out bool found)
    {
        if (covering > 0)
        {
            found = Finish(op, userKey, operands, value);
            return true;
        }
        found = false;
        return false;
    }

    // No base: the operands alone make the value; none means the key is absent.
    private static bool Finish(KvMergeOperator? op, ReadOnlySpan<byte> userKey, MergeContext operands, IBufferWriter<byte> value)
    {
        if (operands.Count == 0)
        {
            return false;
        }
        MergeHelper.FullMerge(op, userKey, hasBase: false, default, operands, value);
        return true;
    }
}
