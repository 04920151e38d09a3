namespace KvEngine.Table;

/// <summary>
/// A position in a table's index, single-level or partitioned: for a two-level index a cursor
/// over the top-level index picks index partitions (taken through
/// <see cref="TableReader.AcquireIndexPartition"/>: pinned, block cache, or read) and a second
/// cursor walks the current partition; empty partitions are skipped in both directions. For a
/// single-level index it is the one cursor. <see cref="Handle"/> is the current data block's.
/// <para>
/// A mutable struct (keep it in a field or local, never copy a live one). It does not own the
/// top-level block; it holds a lease on the current partition, released on each partition change
/// and on <see cref="Dispose"/>. Not thread-safe.
/// </para>
/// </summary>
internal struct IndexCursor : IDisposable
{
    private readonly TableReader _table;
    private readonly bool _twoLevel;
    private readonly bool _fillCache;
    private BlockCursor _top;
    private BlockCursor _partition;
    private BlockLease _lease;
    private Block? _partitionBlock;
    private BlockHandle _partitionHandle;

    public IndexCursor(TableReader table, Block index, bool fillCache)
    {
        _table = table;
        _twoLevel = table.IsTwoLevel;
        _fillCache = fillCache;
        _top = table.NewIndexCursor(index);
    }

    public readonly bool Valid => _twoLevel ? _partitionBlock != null && _partition.Valid : _top.Valid;

    /// <summary>The data block the cursor is at (only while <see cref="Valid"/>).</summary>
    public readonly BlockHandle Handle => _twoLevel ? _partition.Handle : _top.Handle;

    /// <summary>
    /// True when the cursor is valid and its data block's separator is &gt;= <paramref name="target"/>:
    /// after a seek to a smaller target (and any Next since), a seek to <paramref name="target"/> would
    /// stay here, so sorted lookups (MultiGet) skip it.
    /// </summary>
    public readonly bool Covers(ReadOnlySpan<byte> target) =>
        Valid && (_twoLevel ? _partition.Compare(_partition.Key, target) : _top.Compare(_top.Key, target)) >= 0;

    public void SeekToFirst()
    {
        _top.SeekToFirst();
        if (_twoLevel)
        {
            if (LoadPartition())
            {
                _partition.SeekToFirst();
            }
            SkipEmptyForward();
        }
    }

    public void SeekToLast()
    {
        _top.SeekToLast();
        if (_twoLevel)
        {
            if (LoadPartition())
            {
                _partition.SeekToLast();
            }
            SkipEmptyBackward();
        }
    }

    /// <summary>The first data block whose separator is >= <paramref name="target"/> (an internal key).</summary>
    public void Seek(ReadOnlySpan<byte> target)
    {
        _top.Seek(target);
        if (_twoLevel)
        {
            if (LoadPartition())
            {
                _partition.Seek(target);
            }
            SkipEmptyForward();
        }
    }

    public void Next()
    {
        if (!_twoLevel)
        {
            _top.Next();
            return;
        }
        _partition.Next();
        SkipEmptyForward();
    }

    public void Prev()
    {
        if (!_twoLevel)
        {
            _top.Prev();
            return;
        }
        _partition.Prev();
        SkipEmptyBackward();
    }

    public void Dispose()
    {
        ReleasePartition();
        _partition.Dispose();
        _top.Dispose();
    }

    private void SkipEmptyForward()
    {
        while (_partitionBlock == null || !_partition.Valid)
        {
            if (!_top.Valid)
            {
                ReleasePartition();
                return;
            }
            _top.Next();
            if (LoadPartition())
            {
                _partition.SeekToFirst();
            }
        }
    }

    private void SkipEmptyBackward()
    {
        while (_partitionBlock == null || !_partition.Valid)
        {
            if (!_top.Valid)
            {
                ReleasePartition();
                return;
            }
            _top.Prev();
            if (LoadPartition())
            {
                _partition.SeekToLast();
            }
        }
    }

    /// <summary>Makes the partition cursor cover the partition the top level points at; false when the top level is invalid.</summary>
    private bool LoadPartition()
    {
        if (!_top.Valid)
        {
            ReleasePartition();
            return false;
        }
        BlockHandle handle = _top.Handle;
        if (_partitionBlock != null && handle == _partitionHandle)
        {
            return true;
        }
        ReleasePartition();
        _lease = _table.AcquireIndexPartition(handle, _fillCache);
        Block block = _lease.Block;
        _partitionBlock = block;
        _partitionHandle = handle;
        if (_partition.Block == null)
        {
            _partition = _table.NewIndexCursor(block);
        }
        else
        {
            _partition.Reset(block);
        }
        return true;
    }

    private void ReleasePartition()
    {
        if (_partitionBlock != null)
        {
            _partition.Detach();
            _partitionBlock = null;
            BlockLease lease = _lease;
            _lease = default;
            lease.Release();
        }
    }
}
