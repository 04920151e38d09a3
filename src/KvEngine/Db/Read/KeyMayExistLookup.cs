using System.Buffers;
using KvEngine.Db.State;
using KvEngine.Format;
using KvEngine.Table;
using KvEngine.Util;
using KvEngine.Versions;

using ValueType = KvEngine.Format.ValueType;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Db.Read;

/// <summary>
/// RocksDB's KeyMayExist: false only when a key certainly has no value at the read sequence,
/// decided without I/O. The memtables answer first, through Get's memtable step
/// (<see cref="PointReader.TryGetFromMemTables"/>: a value found there is appended to the caller's
/// buffer and reported; a deletion is a certain absence; a merge operand is "may exist", its base
/// may need I/O); then each table that could hold the key, newest first, is asked through its filter
/// only if the filter is in memory (the reader's, pinned, or in the block cache) and the table is
/// already open. Any table that cannot prove absence makes the answer true. A range tombstone
/// covering the key after the newer tables proved absence makes it false, as Get would.
/// <para>
/// Invariants: the caller (<see cref="DbImpl"/>) has pinned the read state before it took
/// the sequence and releases it after the call; no table is opened, no block read, no lock taken.
/// </para>
/// Thread-safety: stateless; any number of threads at once.
/// </summary>
internal static class KeyMayExistLookup
{
    /// <summary>The answer for <paramref name="key"/> at <paramref name="sequence"/> in <paramref name="state"/>; <paramref name="valueFound"/> when a memtable held its value.</summary>
    public static bool MayExist(ColumnFamilyData cfd, ReadState state, ReadOnlySpan<byte> key, ulong sequence, IBufferWriter<byte>? value, out bool valueFound)
    {
        valueFound = false;
        ulong covering = 0;
        IBufferWriter<byte> sink = value ?? NullBufferWriter.Instance;
        if (PointReader.TryGetFromMemTables(state, key, sequence, sink, ref covering, out ValueType memType))
        {
            if (memType == ValueType.Merge)
            {
                return true; // the operands' base may be in a table: the value needs I/O
            }
            valueFound = PointReader.CheckType(memType);
            return valueFound;
        }
        int length = key.Length + InternalKeys.TrailerSize;
        byte[] lookup = ArrayPool<byte>.Shared.Rent(length);
        try
        {
            InternalKeys.Encode(lookup.AsSpan(0, length), key, sequence, ValueType.ValueTypeForSeek);
            return TablesMayHold(cfd.Tables, state.Version, key, lookup.AsSpan(0, length), sequence, covering);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(lookup);
        }
    }

    // KeyMayExist over the tables, through Get's file walk: a file that cannot prove absence answers
    // true (an unopened table too: opening it is I/O); a covering tombstone after the newer files
    // proved absence answers false.
    private static bool TablesMayHold(TableCache tables, Version v, ReadOnlySpan<byte> key, ReadOnlySpan<byte> lookup, ulong sequence, ulong covering)
    {
        var picker = new FilePicker(v, key, sequence, covering);
        while (picker.Next(out FileMetaData? file))
        {
            if (!tables.TryGetOpen(file, out TableReader? reader))
            {
                return true;
            }
            picker.Cover(reader);
            if (reader.CachedKeyMayMatch(key, lookup, sequence))
            {
                return true;
            }
            if (picker.Covered)
            {
                return false;
            }
        }
        return false;
    }
}
