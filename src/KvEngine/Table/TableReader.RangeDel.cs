using KvEngine.Iterators;
using KvEngine.RangeDel;

namespace KvEngine.Table;

/// <summary>The table's range tombstones, fragmented once (RocksDB's ReadRangeDelBlock at table open).</summary>
internal sealed partial class TableReader
{
    private FragmentedRangeTombstoneList? _rangeTombstones;

    /// <summary>Handle of the "rocksdb.range_del" block, or null when the table has none.</summary>
    public BlockHandle? RangeDelHandle { get; }

    /// <summary>
    /// The fragmented tombstones of the range_del block, clipped to the file's key range, or null
    /// when the table has none; set by <see cref="LoadRangeTombstones"/>.
    /// </summary>
    public FragmentedRangeTombstoneList? RangeTombstones => Volatile.Read(ref _rangeTombstones);

    /// <summary>
    /// Reads and fragments the range_del block once, keeping the tombstones inside
    /// [<paramref name="lower"/>, <paramref name="upper"/>) (user keys; null = unbounded): a table
    /// read through a version is clipped to the file's boundaries (RocksDB's
    /// TruncatedRangeDelIterator), so a tombstone written whole into several files of a level
    /// deletes, through each file, only within that file's range. Call before publishing the reader.
    /// </summary>
    public void LoadRangeTombstones(byte[]? lower, byte[]? upper)
    {
        if (RangeDelHandle is null)
        {
            return;
        }
        using InternalIterator it = NewRangeTombstoneIterator()!;
        FragmentedRangeTombstoneList list = FragmentedRangeTombstoneList.Build(it, lower, upper);
        Volatile.Write(ref _rangeTombstones, list.IsEmpty ? null : list);
    }

    /// <summary>
    /// Approximate offset in the file where the entries of <paramref name="userKey"/> start
    /// (RocksDB's ApproximateOffsetOf): the data block the index names for it, or the end of the
    /// data blocks when the key sorts after every entry. Reads the index, both levels of a
    /// partitioned one (not filling the cache): exact to a data block.
    /// </summary>
    public ulong ApproximateOffsetOf(ReadOnlySpan<byte> userKey)
    {
        byte[] seek = Format.InternalKeys.Create(userKey, Format.InternalKeys.MaxSequenceNumber, Format.ValueType.ValueTypeForSeek);
        BlockLease lease = AcquireIndex(fillCache: false);
        var index = new IndexCursor(this, lease.Block, fillCache: false);
        try
        {
            index.Seek(seek);
            return index.Valid ? index.Handle.Offset : Properties.DataSize;
        }
        finally
        {
            index.Dispose();
            lease.Release();
        }
    }

    /// <summary>An iterator over the range tombstones (start internal key -> end user key), or null when there are none.</summary>
    public InternalIterator? NewRangeTombstoneIterator()
    {
        if (RangeDelHandle is not BlockHandle h)
        {
            return null;
        }
        var it = new BlockIterator(ReadMetaBlock(h, "range deletion"), BlockKeyFormat.InternalKey, ownsBlock: true);
        return GlobalSequenceNumber == 0 ? it : new GlobalSequenceIterator(it, GlobalSequenceNumber);
    }
}
