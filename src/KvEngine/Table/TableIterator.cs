using KvEngine.Iterators;
using KvEngine.Util;

namespace KvEngine.Table;

/// <summary>
/// Two-level iterator over a table: an <see cref="IndexCursor"/> over the index (leased from
/// <see cref="TableReader.AcquireIndex"/> at creation and after <see cref="Unpin"/> at the next
/// positioning; with a partitioned index it walks the index partitions too) picks data blocks, taken
/// through <see cref="TableReader.ReadDataBlock(BlockHandle, bool, bool, ref Readahead)"/> (the block cache); a cursor walks the current
/// block. Empty blocks are skipped in both directions. Holds a lease on the current data block
/// (released on each block change, on Unpin and on Dispose). Blocks read in file order are read
/// ahead (<see cref="Readahead"/>, RocksDB's automatic iterator readahead), the next range
/// asynchronously with <see cref="IteratorReads.Prefetch"/> (<see cref="AsyncPrefetcher"/>). In a
/// scan's tree (<see cref="IteratorReads.Scan"/>) a data block neither cached nor fetched is not
/// read: the iterator becomes invalid and the scan fetches it (<see cref="ScanBlockFetcher"/>).
/// Not thread-safe.
/// <para>
/// Instances come from <see cref="Rent"/> and go back to a per-thread pool on Dispose (one owner:
/// the level or merging iterator that opened it), so a level iterator moving between files creates
/// no objects in steady state. A second Dispose does nothing; no use after Dispose.
/// </para>
/// </summary>
internal sealed class TableIterator : InternalIterator
{
    private TableReader? _table;
    private bool _verifyChecksums;
    private bool _fillCache;
    private bool _prefixFilter; // Seek/SeekForPrev consult the table's prefix filter (prefix-seek mode)
    private bool _hasIndex;
    private BlockLease _indexLease;
    private IndexCursor _index;
    private BlockCursor _data;
    private BlockLease _lease;
    private Block? _dataBlock;
    private BlockHandle _dataHandle;
    private Readahead _readahead;
    private AsyncPrefetcher? _prefetcher; // kept across uses of the pooled iterator (its slots are reused)
    private ScanBlockFetcher? _scan;
    private bool _incomplete; // a data block was deferred to the scan: not Valid until positioned again

    private TableIterator()
    {
        _readahead.Reset(); // Dispose resets it again before the pool hands the iterator out anew
    }

    /// <summary>
    /// An iterator over <paramref name="table"/> (recycled from this thread's pool when it has one); the index is leased at once.
    /// With <paramref name="prefixFilter"/>, Seek and SeekForPrev first ask the table's prefix filter
    /// (<see cref="TableReader.PrefixMayMatch"/>) and yield nothing when it proves the target's prefix absent (RocksDB's prefix seek).
    /// <paramref name="reads"/> adds asynchronous prefetch or a scan's deferred reads (see <see cref="IteratorReads"/>).
    /// </summary>
    public static TableIterator Rent(TableReader table, bool verifyChecksums, bool fillCache = true, bool prefixFilter = false, int readaheadSize = 0,
        IteratorReads? reads = null)
    {
        TableIterator it = ThreadLocalPool<TableIterator>.TryRent() ?? new TableIterator();
        it._table = table;
        it._scan = reads?.Scan;
        if (reads is { Prefetch: true })
        {
            it._prefetcher ??= new AsyncPrefetcher();
            it._readahead.Prefetcher = it._prefetcher;
        }
        it._verifyChecksums = verifyChecksums;
        it._fillCache = fillCache;
        it._prefixFilter = prefixFilter && table.HasPrefixFilter;
        it._readahead.SetFixedSize(readaheadSize);
        try
        {
            it.AcquireIndex();
        }
        catch
        {
            it.Dispose();
            throw;
        }
        return it;
    }

    private TableReader Table => _table ?? throw new ObjectDisposedException(nameof(TableIterator));

    private void AcquireIndex()
    {
        ThrowIfTableDisposed();
        if (!_hasIndex)
        {
            TableReader table = Table;
            _indexLease = table.AcquireIndex(_fillCache);
            _index = new IndexCursor(table, _indexLease.Block, _fillCache);
            _hasIndex = true;
        }
    }

    /// <summary>Releases the data block and the index (re-leased at the next positioning); not Valid afterwards.</summary>
    public override void Unpin()
    {
        ReleaseDataBlock();
        _readahead.Prefetcher?.Reset(); // a parked iterator keeps no read in flight
        if (_hasIndex)
        {
            _hasIndex = false;
            _index.Dispose();
            _index = default;
            BlockLease index = _indexLease;
            _indexLease = default;
            index.Release();
        }
    }

    public override bool Valid => _dataBlock != null && _data.Valid;

    public override ReadOnlySpan<byte> Key => _data.Key;

    public override ReadOnlySpan<byte> Value => _data.Value;

    public override void SeekToFirst()
    {
        _incomplete = false;
        AcquireIndex();
        _index.SeekToFirst();
        if (LoadDataBlock())
        {
            _data.SeekToFirst();
        }
        SkipEmptyBlocksForward();
    }

    public override void SeekToLast()
    {
        _incomplete = false;
        AcquireIndex();
        _index.SeekToLast();
        if (LoadDataBlock())
        {
            _data.SeekToLast();
        }
        SkipEmptyBlocksBackward();
    }

    /// <summary>
    /// The table's whole-key filter; true without one. A filter of prefixes only is not consulted, so
    /// a total-order seek leaves the prefix tickers (RocksDB counts them for prefix seeks) as they were.
    /// </summary>
    public override bool MayContainUserKey(ReadOnlySpan<byte> userKey)
    {
        TableReader table = Table;
        return !table.HasWholeKeyFilter || table.KeyMayMatch(userKey, _fillCache);
    }

    public override void Seek(ReadOnlySpan<byte> target)
    {
        CheckTarget(target);
        _incomplete = false;
        if (_prefixFilter && !Table.PrefixMayMatch(target, _fillCache))
        {
            ReleaseDataBlock(); // no key with the target's prefix here: not Valid
            return;
        }
        AcquireIndex();
        _index.Seek(target);
        if (LoadDataBlock())
        {
            _data.Seek(target);
        }
        SkipEmptyBlocksForward();
    }

    public override void SeekForPrev(ReadOnlySpan<byte> target)
    {
        CheckTarget(target);
        _incomplete = false;
        if (_prefixFilter && !Table.PrefixMayMatch(target, _fillCache))
        {
            ReleaseDataBlock();
            return;
        }
        AcquireIndex();
        // The first block whose separator is >= target holds the answer or it is further back.
        _index.Seek(target);
        if (!_index.Valid)
        {
            _index.SeekToLast();
        }
        if (LoadDataBlock())
        {
            _data.SeekForPrev(target);
        }
        SkipEmptyBlocksBackward();
    }

    public override void Next()
    {
        _data.Next();
        SkipEmptyBlocksForward();
    }

    public override void Prev()
    {
        _data.Prev();
        SkipEmptyBlocksBackward();
    }

    protected override void Dispose(bool disposing)
    {
        if (disposing && _table != null)
        {
            Unpin();
            _data.Dispose();
            _data = default;
            _dataHandle = default;
            _readahead.Dispose(); // a pooled iterator keeps no buffer
            _readahead.Prefetcher = null; // Unpin reset it: reads in flight were cancelled and keep their buffers until they complete
            _scan = null;
            _incomplete = false;
            _table = null;
            ThreadLocalPool<TableIterator>.Return(this);
        }
        base.Dispose(disposing);
    }

    /// <summary>
    /// The reader's own index lives in native memory freed with the reader: an iterator that
    /// outlives its database (the readers disposed at close) must not walk it. Checked before every
    /// index movement; closing a database while another thread still iterates is not supported.
    /// </summary>
    private void ThrowIfTableDisposed()
    {
        if (Table.IsDisposed)
        {
            throw new ObjectDisposedException(Table.FileName, "The table was closed (its database was disposed) while an iterator still used it.");
        }
    }

    private static void CheckTarget(ReadOnlySpan<byte> target)
    {
        if (target.Length < Format.InternalKeys.TrailerSize)
        {
            throw new ArgumentException("Seek targets are internal keys (user key + 8-byte trailer).", nameof(target));
        }
    }

    private void SkipEmptyBlocksForward()
    {
        while (_dataBlock == null || !_data.Valid)
        {
            if (!_index.Valid || _incomplete)
            {
                ReleaseDataBlock();
                return;
            }
            ThrowIfTableDisposed();
            _index.Next();
            if (LoadDataBlock())
            {
                _data.SeekToFirst();
            }
        }
    }

    private void SkipEmptyBlocksBackward()
    {
        while (_dataBlock == null || !_data.Valid)
        {
            if (!_index.Valid || _incomplete)
            {
                ReleaseDataBlock();
                return;
            }
            ThrowIfTableDisposed();
            _index.Prev();
            if (LoadDataBlock())
            {
                _data.SeekToLast();
            }
        }
    }

    /// <summary>Makes the data cursor cover the block the index points at; false when the index is invalid.</summary>
    private bool LoadDataBlock()
    {
        if (!_index.Valid)
        {
            ReleaseDataBlock();
            return false;
        }
        BlockHandle handle = _index.Handle;
        if (_dataBlock != null && handle == _dataHandle)
        {
            return true;
        }
        ReleaseDataBlock();
        if (_scan is { AllowsReads: false } scan)
        {
            if (scan.HasPending || !Table.TryLeaseDataBlockWithoutRead(handle, _verifyChecksums, _fillCache, scan, out _lease))
            {
                _incomplete = true; // the scan fetches the block and positions again
                return false;
            }
        }
        else
        {
            _lease = Table.ReadDataBlock(handle, _verifyChecksums, _fillCache, ref _readahead);
        }
        Block block = _lease.Block;
        _dataBlock = block;
        _dataHandle = handle;
        if (_data.Block == null)
        {
            _data = new BlockCursor(block, BlockKeyFormat.InternalKey);
        }
        else
        {
            _data.Reset(block);
        }
        return true;
    }

    private void ReleaseDataBlock()
    {
        if (_dataBlock != null)
        {
            _data.Detach();
            _dataBlock = null;
            BlockLease lease = _lease;
            _lease = default;
            lease.Release();
        }
    }
}
