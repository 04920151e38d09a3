using KvEngine.Iterators;

namespace KvEngine.Table;

/// <summary>
/// Two-level iterator over a table: an <see cref="IndexCursor"/> over the index (leased for the
/// iterator's lifetime from <see cref="TableReader.AcquireIndex"/>; with a partitioned index it
/// walks the index partitions too) picks data blocks, taken
/// through <see cref="TableReader.ReadDataBlock"/> (the block cache); a cursor walks the current
/// block. Empty blocks are skipped in both directions. Holds a lease on the current data block
/// (released on each block change and on Dispose). Not thread-safe.
/// </summary>
internal sealed class TableIterator : InternalIterator
{
    private readonly TableReader _table;
    private readonly bool _verifyChecksums;
    private readonly bool _fillCache;
    private readonly BlockLease _indexLease;
    private IndexCursor _index;
    private BlockCursor _data;
    private BlockLease _lease;
    private Block? _dataBlock;
    private BlockHandle _dataHandle;

    public TableIterator(TableReader table, bool verifyChecksums, bool fillCache = true)
    {
        _table = table;
        _verifyChecksums = verifyChecksums;
        _fillCache = fillCache;
        _indexLease = table.AcquireIndex(fillCache);
        _index = new IndexCursor(table, _indexLease.Block, fillCache);
    }

    public override bool Valid => _dataBlock != null && _data.Valid;

    public override ReadOnlySpan<byte> Key => _data.Key;

    public override ReadOnlySpan<byte> Value => _data.Value;

    public override void SeekToFirst()
    {
        _index.SeekToFirst();
        if (LoadDataBlock())
        {
            _data.SeekToFirst();
        }
        SkipEmptyBlocksForward();
    }

    public override void SeekToLast()
    {
        _index.SeekToLast();
        if (LoadDataBlock())
        {
            _data.SeekToLast();
        }
        SkipEmptyBlocksBackward();
    }

    public override void Seek(ReadOnlySpan<byte> target)
    {
        CheckTarget(target);
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
        if (disposing)
        {
            ReleaseDataBlock();
            _data.Dispose();
            _index.Dispose();
            _indexLease.Release();
        }
        base.Dispose(disposing);
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
            if (!_index.Valid)
            {
                ReleaseDataBlock();
                return;
            }
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
            if (!_index.Valid)
            {
                ReleaseDataBlock();
                return;
            }
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
        _lease = _table.ReadDataBlock(handle, _verifyChecksums, _fillCache);
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
