using KvEngine.Db.State;
using KvEngine.Memtable;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Db.Write;

/// <summary>
/// Applies a batch's records, with consecutive sequence numbers, to the mutable memtables of
/// their column families. A record of a family that is not there (dropped, or at recovery
/// already in the family's tables: its WAL is older than the family's log number) still takes
/// its sequence number and is skipped, as RocksDB's MemTableInserter does.
/// Used by one thread at a time (a write group member's insert, or WAL replay at open); with
/// <c>concurrent</c> several inserters write one memtable together through its concurrent path.
/// </summary>
internal struct MemTableInserter : Wal.IWriteBatchHandler
{
    private readonly ColumnFamilyData?[] _families;
    private readonly bool _concurrent;
    private readonly ulong _logNumber;
    private readonly bool _refuseMerge;
    private MemTable? _mem;
    private bool _mergeRefused;
    private ulong _sequence;

    /// <param name="families">The column families by id (null: dropped or unknown; their records are skipped).</param>
    /// <param name="firstSequence">The sequence number of the batch's first record.</param>
    /// <param name="concurrent">Insert concurrently with other writers.</param>
    /// <param name="logNumber">
    /// The WAL being replayed at recovery (records of a family whose log number is above it are
    /// skipped); <see cref="ulong.MaxValue"/> for live writes.
    /// </param>
    /// <param name="refuseMerge">Throw on a merge record of a family without a merge operator (WAL replay).</param>
    public MemTableInserter(ColumnFamilyData?[] families, ulong firstSequence, bool concurrent, ulong logNumber = ulong.MaxValue, bool refuseMerge = false)
    {
        _families = families;
        _sequence = firstSequence;
        _concurrent = concurrent;
        _logNumber = logNumber;
        _refuseMerge = refuseMerge;
    }

    public bool SeekColumnFamily(uint columnFamily)
    {
        ColumnFamilyData? cfd = columnFamily < (uint)_families.Length ? _families[columnFamily] : null;
        if (cfd == null || _logNumber < cfd.Versions.LogNumber)
        {
            _mem = null;
            return false;
        }
        _mem = cfd.Mem;
        _mergeRefused = _refuseMerge && cfd.Options.MergeOperator is null;
        return true;
    }

    public void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) => _mem!.Add(_sequence++, ValueType.Value, key, value, _concurrent);

    public void Delete(ReadOnlySpan<byte> key) => _mem!.Add(_sequence++, ValueType.Deletion, key, default, _concurrent);

    public void SingleDelete(ReadOnlySpan<byte> key) => _mem!.Add(_sequence++, ValueType.SingleDeletion, key, default, _concurrent);

    public void DeleteRange(ReadOnlySpan<byte> beginKey, ReadOnlySpan<byte> endKey) =>
        _mem!.Add(_sequence++, ValueType.RangeDeletion, beginKey, endKey, _concurrent);

    public void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
    {
        if (_mergeRefused)
        {
            throw new KvException($"{KvEngine.Merge.MergeHelper.NotInitializedMessage} The log holds a merge operand; set ColumnFamilyOptions.MergeOperator.", KvStatusCode.InvalidArgument, KvStatusSubCode.None, null);
        }
        _mem!.Add(_sequence++, ValueType.Merge, key, value, _concurrent);
    }

    public void SkipDroppedRecord() => _sequence++;
}
