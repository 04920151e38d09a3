using System.Buffers;
using KvEngine.Db.State;
using KvEngine.Memtable;
using KvEngine.Util;

using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Db.Read;

/// <summary>
/// The point lookup (RocksDB's DBImpl::GetImpl once the SuperVersion is referenced): the key's
/// newest entry at the read sequence in the mutable memtable, the immutable memtables newest first,
/// then the version's tables (<see cref="TryGetFromTables"/>: the <see cref="FilePicker"/>'s walk).
/// The first entry found decides: a Value is copied into the caller's buffer, a Deletion or
/// SingleDeletion means absent, a Merge operand sends the key through <see cref="MergeLookup"/>.
/// Each source's range tombstones raise the key's covering sequence before its entries are read;
/// an entry older than it is deleted, and a source that covers the key decides (every older source
/// holds only older entries). <see cref="MultiGetReader"/> and <see cref="KeyMayExistLookup"/>
/// share the memtable step (<see cref="TryGetFromMemTables"/>) and <see cref="CheckType"/>.
/// <para>
/// Invariants: the caller (<see cref="DbImpl"/>) has pinned the read state before it
/// took the sequence and releases it after the call; nothing here changes the state, takes a lock or
/// allocates (a Get on cached blocks is 0 B, <c>ReadPathAllocationTests</c>); a Get that searched
/// level-0 files in vain charges them to the family's <see cref="Compaction.Level0ReadCharges"/>
/// (one atomic add) and, when that crosses the budget, wakes the background threads.
/// </para>
/// Thread-safety: immutable after construction (the statistics are thread-safe); any number of
/// threads read through one instance at once.
/// </summary>
internal sealed class PointReader
{
    private readonly KvStatistics? _stats;
    private readonly Action _wakeBackground;

    /// <param name="stats">Statistics to record into, or null.</param>
    /// <param name="wakeBackground">Wakes the background threads: a read-triggered compaction was requested.</param>
    public PointReader(KvStatistics? stats, Action wakeBackground)
    {
        _stats = stats;
        _wakeBackground = wakeBackground;
    }

    /// <summary>True when <paramref name="key"/> has a value at <paramref name="sequence"/> in <paramref name="state"/> (written to <paramref name="value"/>).</summary>
    public bool TryGet(ColumnFamilyData cfd, ReadState state, ReadOnlySpan<byte> key, ulong sequence, IBufferWriter<byte> value, ReadOptions options)
    {
        KvStatistics? stats = _stats;
        ulong covering = 0;
        bool found;
        if (TryGetFromMemTables(state, key, sequence, value, ref covering, out ValueType memType))
        {
            stats?.Record(Ticker.MemtableHit);
            found = memType == ValueType.Merge
                ? MergeLookup.TryGet(state, cfd.Tables, cfd.Options.MergeOperator, key, sequence, value, options.VerifyChecksums, options.FillCache)
                : CheckType(memType);
        }
        else
        {
            stats?.Record(Ticker.MemtableMiss);
            bool inTables = TryGetFromTables(state.Version, cfd.Tables, key, sequence, value, options.VerifyChecksums, options.FillCache, covering,
                out ValueType type, out int level, out GetStats getStats);
            if (cfd.Level0Reads.Charge(getStats.Level0Charge, state.Level0ReadBudget))
            {
                _wakeBackground(); // a read-triggered compaction of level 0 is due
            }
            found = inTables &&
                (type == ValueType.Merge
                    ? MergeLookup.TryGet(state, cfd.Tables, cfd.Options.MergeOperator, key, sequence, value, options.VerifyChecksums, options.FillCache)
                    : CheckType(type));
            if (stats != null && level >= 0)
            {
                stats.Record(level == 0 ? Ticker.GetHitL0 : level == 1 ? Ticker.GetHitL1 : Ticker.GetHitL2AndUp);
            }
        }
        return found;
    }

    /// <summary>
    /// Looks <paramref name="key"/> up as of <paramref name="sequence"/> in the tables of
    /// <paramref name="version"/>, newest data first, through the <see cref="FilePicker"/>.
    /// <paramref name="covering"/> is the newest visible tombstone sequence covering the key that
    /// the memtables found. Each table's tombstones are applied before its filter and point lookup;
    /// an entry older than the covering sequence is a Deletion, and once a table covers the key the
    /// lookup ends there as a Deletion. Returns true when a table decided: <paramref name="type"/>
    /// tells whether the entry is a value (appended to <paramref name="value"/>), a merge operand
    /// or a deletion, <paramref name="level"/> where (-1 when not found). <paramref name="stats"/>
    /// says what was read from disk (for the read-triggered compaction of level 0).
    /// </summary>
    public static bool TryGetFromTables(Versions.Version version, Versions.TableCache tables, ReadOnlySpan<byte> key, ulong sequence, IBufferWriter<byte> value,
        bool verifyChecksums, bool fillCache, ulong covering, out ValueType type, out int level, out GetStats stats)
    {
        var picker = new FilePicker(version, key, sequence, covering);
        while (picker.Next(out Versions.FileMetaData? file))
        {
            Table.TableReader reader = tables.Get(file, picker.Level);
            picker.Cover(reader);
            bool hit = reader.TryGet(key, sequence, value, out type, verifyChecksums, fillCache, picker.Covering, out bool readFromFile);
            picker.Record(readFromFile, decided: hit || picker.Covered);
            if (hit || picker.Covered)
            {
                if (!hit)
                {
                    type = ValueType.Deletion; // a range tombstone deletes the key here and in every older file
                }
                level = picker.Level;
                stats = picker.Stats;
                return true;
            }
        }
        type = default;
        level = -1;
        stats = picker.Stats;
        return false;
    }

    /// <summary>
    /// True when a memtable decided the lookup: <paramref name="type"/> is Value (written to
    /// <paramref name="value"/>), Deletion, or Merge (nothing written: the caller merges).
    /// <paramref name="covering"/> collects the newest visible range tombstone covering the key;
    /// a memtable whose tombstones cover it decides (every older source holds only older entries).
    /// </summary>
    public static bool TryGetFromMemTables(ReadState state, ReadOnlySpan<byte> key, ulong sequence, IBufferWriter<byte> value, ref ulong covering, out ValueType type)
    {
        if (TryGetFromMemTable(state.Mem, key, sequence, value, ref covering, out type))
        {
            return true;
        }
        foreach (MemTable imm in state.Immutable)
        {
            if (TryGetFromMemTable(imm, key, sequence, value, ref covering, out type))
            {
                return true;
            }
        }
        return false;
    }

    private static bool TryGetFromMemTable(MemTable mem, ReadOnlySpan<byte> key, ulong sequence, IBufferWriter<byte> value, ref ulong covering, out ValueType type)
    {
        if (mem.GetRangeTombstones() is { } tombstones)
        {
            covering = Math.Max(covering, tombstones.MaxCoveringSequence(key, sequence));
        }
        if (!mem.TryGet(key, sequence, out type, out ReadOnlySpan<byte> v, out ulong entrySequence))
        {
            type = ValueType.Deletion;
            return covering > 0;
        }
        if (entrySequence < covering)
        {
            type = ValueType.Deletion;
            return true;
        }
        if (type != ValueType.Merge && CheckType(type))
        {
            BufferWriterCopy.WriteWhole(value, v);
        }
        return true;
    }

    /// <summary>True for a Value, false for a Deletion or SingleDeletion; <see cref="KvCorruptionException"/> for any other type.</summary>
    public static bool CheckType(ValueType type) => type switch
    {
        ValueType.Value => true,
        ValueType.Deletion or ValueType.SingleDeletion => false,
        _ => throw new KvCorruptionException($"Unexpected entry type {(int)type}."),
    };
}
