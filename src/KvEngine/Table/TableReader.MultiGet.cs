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
/// keys it holds. KeyMayExist's cache-only filter probe lives here too.
/// </summary>
internal sealed partial class TableReader
{
    /// <summary>
    /// Looks up the positions <paramref name="batch"/> of <paramref name="ctx"/> (sorted, distinct)
    /// at <paramref name="sequence"/>: first raises each key's covering sequence with this table's
    /// range tombstones (as <see cref="TryGet(ReadOnlySpan{byte}, ulong, System.Buffers.IBufferWriter{byte}, out ValueType, bool, bool, ulong)"/>
    /// does), then probes the filter, then the index and data blocks. Each key's newest visible entry
    /// is reported through <see cref="MultiGetContext.Outcome"/> (its type, classified as Get does) and,
    /// for a Value, <paramref name="onValue"/>; keys without an entry keep <see cref="MultiGetContext.NotFound"/>.
    /// </summary>
    internal void MultiGet<TSink>(MultiGetContext ctx, ReadOnlySpan<int> batch, ulong sequence, bool verifyChecksums, bool fillCache, ref TSink onValue)
        where TSink : struct, IMultiGetValueSink
    {
        if (sequence < GlobalSequenceNumber)
        {
            return; // every entry of an ingested file is newer than the reader's sequence
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
            return;
        }
        bool[] mayMatch = ctx.MayMatch;
        BlockLease indexLease = AcquireIndex(fillCache);
        var index = new IndexCursor(this, indexLease.Block, fillCache);
        BlockLease dataLease = default;
        BlockHandle dataHandle = default;
        bool hasData = false;
        BlockCursor data = default;
        try
        {
            foreach (int pos in batch)
            {
                if (!mayMatch[pos])
                {
                    continue;
                }
                ReadOnlySpan<byte> seekKey = ctx.SeekKey(pos, sequence);
                ReadOnlySpan<byte> userKey = InternalKeys.UserKey(seekKey);
                if (!index.Covers(seekKey))
                {
                    index.Seek(seekKey); // keys come sorted: a key in the current block needs no index search
                }
                for (; index.Valid; index.Next())
                {
                    BlockHandle handle = index.Handle;
                    if (!hasData || handle != dataHandle)
                    {
                        if (hasData)
                        {
                            hasData = false;
                            data.Detach();
                            dataLease.Release();
                        }
                        dataLease = ReadDataBlock(handle, verifyChecksums, fillCache);
                        hasData = true;
                        dataHandle = handle;
                        if (data.Block == null)
                        {
                            data = new BlockCursor(dataLease.Block, BlockKeyFormat.InternalKey);
                        }
                        else
                        {
                            data.Reset(dataLease.Block);
                        }
                    }
                    data.Seek(seekKey);
                    if (!data.Valid)
                    {
                        continue; // the target sorts after this block's last key; try the next block
                    }
                    ReadOnlySpan<byte> found = data.Key;
                    if (!InternalKeys.UserKey(found).SequenceEqual(userKey))
                    {
                        break;
                    }
                    ValueType type = ClassifyEntry(found, ctx.Covering[pos]);
                    ctx.Outcome[pos] = (byte)type;
                    if (type == ValueType.Value)
                    {
                        onValue.OnValue(pos, data.Value);
                    }
                    break;
                }
            }
        }
        finally
        {
            if (hasData)
            {
                data.Detach();
                dataLease.Release();
            }
            data.Dispose();
            index.Dispose();
            indexLease.Release();
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
            indexLease = new BlockLease((Block)h.Value, h, _options.BlockCache);
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
