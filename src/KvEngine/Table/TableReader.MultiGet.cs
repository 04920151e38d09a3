using KvEngine.Cache;
using KvEngine.Db;
using KvEngine.Format;

using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Table;

/// <summary>
/// The batched point lookups of <see cref="TableReader"/> (RocksDB's BlockBasedTable::MultiGet):
/// the keys of one MultiGet that fall in this table, in key order, share one filter lease (full
/// filter, or one per filter partition the sorted keys walk through), one index lease and one index
/// cursor (so each index partition is taken once), and each data block is taken once for the run of
/// keys it holds. The keys go in windows of <see cref="MultiGetContext.LookupWindow"/>: every key's
/// block is found, leased and prefetched before any key is sought in its block, so the window's
/// cache misses overlap; a window's leases are all released before the next window (also when a
/// read throws). KeyMayExist's cache-only filter probe lives here too.
/// </summary>
internal sealed partial class TableReader
{
    /// <summary>
    /// Looks up the positions <paramref name="batch"/> of <paramref name="ctx"/> (sorted, distinct)
    /// at <paramref name="sequence"/>: first raises each key's covering sequence with this table's
    /// range tombstones (as <see cref="TryGet(ReadOnlySpan{byte}, ulong, System.Buffers.IBufferWriter{byte}, out ValueType, bool, bool, ulong)"/>
    /// does), then probes the filter, then the index and data blocks, window by window. Each key's newest visible entry
    /// is reported through <see cref="MultiGetContext.Outcome"/> (its type, classified as Get does) and,
    /// for a Value, <paramref name="onValue"/>; keys without an entry keep <see cref="MultiGetContext.NotFound"/>.
    /// Returns the data blocks read from the file (not the cache), for the caller's read charges.
    /// </summary>
    internal int MultiGet<TSink>(MultiGetContext ctx, ReadOnlySpan<int> batch, ulong sequence, bool verifyChecksums, bool fillCache, ref TSink onValue)
        where TSink : struct, IMultiGetValueSink
    {
        if (sequence < GlobalSequenceNumber)
        {
            return 0; // every entry of an ingested file is newer than the reader's sequence
        }
        if (RangeTombstones is { } tombstones)
        {
            ulong[] covering = ctx.Covering;
            foreach (int pos in batch)
            {
                covering[pos] = Math.Max(covering[pos], tombstones.MaxCoveringSequence(ctx.Key(pos), sequence));
            }
        }
        if (!FilterBatch(ctx, batch, sequence, fillCache))
        {
            return 0;
        }
        int fileReads = 0;
        BlockLease indexLease = AcquireIndex(fillCache);
        var index = new IndexCursor(this, indexLease.Block, fillCache);
        BlockCursor data = default;
        try
        {
            for (int first = 0; first < batch.Length; first += MultiGetContext.LookupWindow)
            {
                ReadOnlySpan<int> window = batch.Slice(first, Math.Min(MultiGetContext.LookupWindow, batch.Length - first));
                int blocks = 0;
                try
                {
                    LeaseWindowBlocks(ctx, window, sequence, verifyChecksums, fillCache, ref index, ref blocks, ref fileReads);
                    SeekWindow(ctx, window, sequence, verifyChecksums, fillCache, ref index, ref data, ref onValue, ref fileReads);
                }
                finally
                {
                    data.Detach();
                    BlockLease[] leases = ctx.WindowBlocks;
                    for (int i = 0; i < blocks; i++)
                    {
                        BlockLease lease = leases[i];
                        leases[i] = default;
                        lease.Release();
                    }
                }
            }
        }
        finally
        {
            data.Dispose();
            index.Dispose();
            indexLease.Release();
        }
        return fileReads;
    }

    // First pass over a window of sorted keys: each key that may match finds its data block through
    // the shared index cursor (a key inside the cursor's current block skips the index search), each
    // distinct block is leased once, and each is prefetched, so the second pass's seeks find their
    // blocks' first lines on their way to the CPU cache instead of missing one block at a time.
    // `blocks` counts the leases taken so far (the caller releases them, also after an exception),
    // `fileReads` the data blocks read from the file.
    private void LeaseWindowBlocks(MultiGetContext ctx, ReadOnlySpan<int> window, ulong sequence, bool verifyChecksums, bool fillCache,
        ref IndexCursor index, ref int blocks, ref int fileReads)
    {
        bool[] mayMatch = ctx.MayMatch;
        int[] slot = ctx.BlockSlot;
        BlockLease[] leases = ctx.WindowBlocks;
        BlockHandle[] handles = ctx.WindowHandles;
        foreach (int pos in window)
        {
            slot[pos] = -1;
            if (!mayMatch[pos])
            {
                continue;
            }
            ReadOnlySpan<byte> seekKey = ctx.SeekKey(pos, sequence);
            if (!index.Covers(seekKey))
            {
                index.Seek(seekKey); // keys come sorted: the cursor only moves forward
            }
            if (!index.Valid)
            {
                continue; // past the table's last block
            }
            BlockHandle handle = index.Handle;
            if (blocks == 0 || handles[blocks - 1] != handle)
            {
                leases[blocks] = ReadDataBlock(handle, verifyChecksums, fillCache, ref fileReads);
                handles[blocks] = handle;
                blocks++;
                leases[blocks - 1].Block.Prefetch();
            }
            slot[pos] = blocks - 1;
        }
    }

    // Second pass: each key is sought in its leased block. A key past its block's last entry (its
    // versions continue in the next block, or it falls between the last key and the separator)
    // walks on through the index as Get does.
    private void SeekWindow<TSink>(MultiGetContext ctx, ReadOnlySpan<int> window, ulong sequence, bool verifyChecksums, bool fillCache,
        ref IndexCursor index, ref BlockCursor data, ref TSink onValue, ref int fileReads)
        where TSink : struct, IMultiGetValueSink
    {
        int[] slot = ctx.BlockSlot;
        BlockLease[] leases = ctx.WindowBlocks;
        int current = -1;
        foreach (int pos in window)
        {
            int s = slot[pos];
            if (s < 0)
            {
                continue;
            }
            if (s != current)
            {
                if (data.Block == null)
                {
                    data = new BlockCursor(leases[s].Block, BlockKeyFormat.InternalKey);
                }
                else
                {
                    data.Reset(leases[s].Block);
                }
                current = s;
            }
            ReadOnlySpan<byte> seekKey = ctx.SeekKey(pos, sequence);
            data.SeekForGet(seekKey); // the block's hash index, when it has one
            if (data.Valid)
            {
                Decide(ctx, pos, ref data, ref onValue);
                continue;
            }
            current = -1; // the walk below moves the cursor to other blocks
            index.Seek(seekKey); // the key's own block again, as the first pass found it
            for (index.Next(); index.Valid; index.Next())
            {
                BlockLease lease = ReadDataBlock(index.Handle, verifyChecksums, fillCache, ref fileReads);
                try
                {
                    data.Reset(lease.Block);
                    data.SeekForGet(seekKey);
                    if (data.Valid)
                    {
                        Decide(ctx, pos, ref data, ref onValue);
                        break;
                    }
                }
                finally
                {
                    data.Detach();
                    lease.Release();
                }
            }
        }
    }

    // The cursor is at the first entry >= the key's seek key: the key's newest visible entry when its user key matches.
    private void Decide<TSink>(MultiGetContext ctx, int pos, ref BlockCursor data, ref TSink onValue)
        where TSink : struct, IMultiGetValueSink
    {
        ReadOnlySpan<byte> found = data.Key;
        if (!InternalKeys.UserKey(found).SequenceEqual(ctx.Key(pos)))
        {
            return;
        }
        ValueType type = ClassifyEntry(found, ctx.Covering[pos]);
        ctx.Outcome[pos] = (byte)type;
        if (type == ValueType.Value)
        {
            onValue.OnValue(pos, data.Value);
        }
    }

    /// <summary>
    /// Sets <see cref="MultiGetContext.MayMatch"/> for each position of <paramref name="batch"/>:
    /// one lease on the full filter for all of them, or, partitioned, one lease on the top-level
    /// filter index and one per partition the sorted keys reach. False when no key may match.
    /// </summary>
    private bool FilterBatch(MultiGetContext ctx, ReadOnlySpan<int> batch, ulong sequence, bool fillCache)
    {
        bool[] mayMatch = ctx.MayMatch;
        if (!_hasFilter || !_filterHasWholeKeys)
        {
            foreach (int pos in batch)
            {
                mayMatch[pos] = true;
            }
            return true;
        }
        if (_partitionedFilter)
        {
            PartitionedFilterBatch(ctx, batch, sequence, fillCache);
        }
        else
        {
            FilterLease lease = AcquireFullFilter(fillCache);
            try
            {
                foreach (int pos in batch)
                {
                    mayMatch[pos] = lease.Reader.MayMatch(ctx.Key(pos));
                }
            }
            finally
            {
                lease.Release();
            }
        }
        KvStatistics? stats = _options.Statistics;
        bool any = false;
        foreach (int pos in batch)
        {
            any |= mayMatch[pos];
            stats?.Record(mayMatch[pos] ? Ticker.BloomFilterFullPositive : Ticker.BloomFilterUseful);
        }
        return any;
    }

    // RocksDB's PartitionedFilterBlockReader::MayMatch over a sorted batch: consecutive keys in one
    // partition share its lease.
    private void PartitionedFilterBatch(MultiGetContext ctx, ReadOnlySpan<int> batch, ulong sequence, bool fillCache)
    {
        bool[] mayMatch = ctx.MayMatch;
        BlockLease indexLease = AcquireFilterIndex(fillCache);
        BlockCursor cursor = NewIndexCursor(indexLease.Block);
        FilterLease partition = default;
        bool hasPartition = false;
        ulong partitionOffset = 0;
        try
        {
            foreach (int pos in batch)
            {
                if (!SeekFilterPartition(ref cursor, ctx.SeekKey(pos, sequence), out BlockHandle handle))
                {
                    mayMatch[pos] = true; // no partitions: nothing proves absence
                    continue;
                }
                if (!hasPartition || handle.Offset != partitionOffset)
                {
                    if (hasPartition)
                    {
                        hasPartition = false;
                        partition.Release();
                    }
                    partition = AcquireFilterPartition(handle, fillCache);
                    hasPartition = true;
                    partitionOffset = handle.Offset;
                }
                mayMatch[pos] = partition.Reader.MayMatch(ctx.Key(pos));
            }
        }
        finally
        {
            if (hasPartition)
            {
                partition.Release();
            }
            cursor.Dispose();
            indexLease.Release();
        }
    }

    /// <summary>
    /// KeyMayExist's probe: false only when a filter already in memory (the reader's, pinned, or in
    /// the block cache) proves <paramref name="userKey"/> absent; never reads the file or fills the
    /// cache. <paramref name="lookupKey"/> is the key as an internal key at the read sequence (it
    /// picks the filter partition).
    /// </summary>
    internal bool CachedKeyMayMatch(ReadOnlySpan<byte> userKey, ReadOnlySpan<byte> lookupKey, ulong sequence)
    {
        if (sequence < GlobalSequenceNumber)
        {
            return false; // nothing in the file is visible at the sequence
        }
        if (!_hasFilter || !_filterHasWholeKeys)
        {
            return true;
        }
        bool mayMatch;
        if (!_partitionedFilter)
        {
            if (_filter != null || _pinnedFilter != null)
            {
                mayMatch = MayMatch(AcquireFullFilter(fillCache: false), userKey);
            }
            else if (TryLookupCachedFilter(_filterHandle, out FilterLease lease))
            {
                mayMatch = MayMatch(lease, userKey);
            }
            else
            {
                return true;
            }
        }
        else if (!TryCachedPartitionMayMatch(userKey, lookupKey, out mayMatch))
        {
            return true;
        }
        if (!mayMatch)
        {
            _options.Statistics?.Record(Ticker.BloomFilterUseful);
        }
        return mayMatch;
    }

    // The partitioned filter from memory only: false when the top-level filter index or the partition is not cached.
    private bool TryCachedPartitionMayMatch(ReadOnlySpan<byte> userKey, ReadOnlySpan<byte> lookupKey, out bool mayMatch)
    {
        mayMatch = true;
        BlockLease indexLease;
        if (_filterIndexBlock != null || _pinnedFilter != null)
        {
            indexLease = AcquireFilterIndex(fillCache: false);
        }
        else if (_options.BlockCache?.Lookup(new CacheKey(_cacheId, _filterHandle.Offset), this, CachePriority.High, _options.Statistics, out _) is LruHandle h)
        {
            RecordHit(CacheEntryRole.FilterMeta);
            indexLease = BlockLease.Cached(h, _options.BlockCache, FileName, "top-level filter index");
        }
        else
        {
            return false;
        }
        if (!FindFilterPartition(indexLease, lookupKey, out BlockHandle handle))
        {
            return true; // no partitions: nothing proves absence
        }
        if (_pinnedFilterPartitions?.Find(handle.Offset) is not null)
        {
            mayMatch = MayMatch(AcquireFilterPartition(handle, fillCache: false), userKey);
            return true;
        }
        if (TryLookupCachedFilter(handle, out FilterLease lease))
        {
            mayMatch = MayMatch(lease, userKey);
            return true;
        }
        return false;
    }
}
