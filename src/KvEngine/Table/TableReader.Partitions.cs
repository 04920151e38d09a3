using KvEngine.Cache;
using KvEngine.Filters;

namespace KvEngine.Table;

/// <summary>
/// The partitioned side of <see cref="TableReader"/>: index partitions under the top-level index,
/// filter partitions under the top-level filter index. Partitions always go through the block
/// cache (high priority; index partitions as Index entries, filter partitions as Filter entries,
/// the top-level filter index as FilterMeta), unless pinned for the reader's life
/// (<see cref="PinnedPartitions"/>, read in one I/O at open).
/// </summary>
internal sealed partial class TableReader
{
    /// <summary>
    /// An index partition: pinned, from the block cache, or read (and, with
    /// <paramref name="fillCache"/>, inserted). The caller releases the lease.
    /// </summary>
    internal BlockLease AcquireIndexPartition(BlockHandle handle, bool fillCache)
    {
        if (_pinnedIndexPartitions?.Find(handle.Offset) is Block pinned)
        {
            return new BlockLease(pinned, null, null, owned: false);
        }
        return AcquireMetaBlock(handle, CacheEntryRole.Index, "index partition", fillCache);
    }

    /// <summary>The top-level filter index: the reader's own, pinned in the cache, or looked up.</summary>
    private BlockLease AcquireFilterIndex(bool fillCache)
    {
        if (_filterIndexBlock != null)
        {
            return new BlockLease(_filterIndexBlock, null, null, owned: false);
        }
        if (_pinnedFilter is LruHandle pinned)
        {
            return new BlockLease((Block)pinned.Value, null, null, owned: false);
        }
        return AcquireMetaBlock(_filterHandle, CacheEntryRole.FilterMeta, "top-level filter index", fillCache);
    }

    /// <summary>
    /// RocksDB's PartitionedFilterBlockReader::KeyMayMatch: the first top-level filter index entry
    /// >= <paramref name="lookupKey"/> (past the end: the last partition) names the partition whose
    /// filter answers.
    /// </summary>
    private bool PartitionedKeyMayMatch(ReadOnlySpan<byte> userKey, ReadOnlySpan<byte> lookupKey, bool fillCache)
    {
        return !FindFilterPartition(AcquireFilterIndex(fillCache), lookupKey, out BlockHandle handle) // no partitions: nothing proves absence
            || MayMatch(AcquireFilterPartition(handle, fillCache), userKey);
    }

    /// <summary>The filter partition for <paramref name="lookupKey"/> under the top-level filter index <paramref name="index"/>, whose lease it releases; false when there are no partitions.</summary>
    private bool FindFilterPartition(BlockLease index, ReadOnlySpan<byte> lookupKey, out BlockHandle handle)
    {
        BlockCursor cursor = NewIndexCursor(index.Block);
        try
        {
            return SeekFilterPartition(ref cursor, lookupKey, out handle);
        }
        finally
        {
            cursor.Dispose();
            index.Release();
        }
    }

    /// <summary>
    /// Positions <paramref name="cursor"/> (over the top-level filter index) at the partition for
    /// <paramref name="lookupKey"/>: the first entry &gt;= it, past the end the last; false when there
    /// are no partitions.
    /// </summary>
    private static bool SeekFilterPartition(ref BlockCursor cursor, ReadOnlySpan<byte> lookupKey, out BlockHandle handle)
    {
        cursor.Seek(lookupKey);
        if (!cursor.Valid)
        {
            cursor.SeekToLast();
            if (!cursor.Valid)
            {
                handle = default;
                return false;
            }
        }
        handle = cursor.Handle;
        return true;
    }

    /// <summary>The filter partition at <paramref name="handle"/>: pinned, or through the block cache. The caller releases the lease.</summary>
    private FilterLease AcquireFilterPartition(BlockHandle handle, bool fillCache) =>
        _pinnedFilterPartitions?.Find(handle.Offset) is FilterCacheValue pinned
            ? FilterLease.Borrowed(pinned.Reader)
            : AcquireCachedFilter(handle, fillCache, demotable: false);

    /// <summary>
    /// Reads every partition under <paramref name="topLevel"/> with one read spanning the first to
    /// the last (RocksDB's CacheDependencies), verifies each, and pins them: in the block cache when
    /// there is one with room, otherwise owned by the reader.
    /// </summary>
    private PinnedPartitions PinPartitions(Block topLevel, CacheEntryRole role)
    {
        string kind = role == CacheEntryRole.Filter ? "filter partition" : "index partition";
        var handles = new List<BlockHandle>();
        BlockCursor cursor = NewIndexCursor(topLevel);
        try
        {
            for (cursor.SeekToFirst(); cursor.Valid; cursor.Next())
            {
                BlockHandle h = cursor.Handle;
                if (handles.Count > 0 && h.Offset <= handles[^1].Offset)
                {
                    throw new KvCorruptionException($"{FileName}: {kind}s out of order in the top-level index at {h}.");
                }
                handles.Add(h);
            }
        }
        finally
        {
            cursor.Dispose();
        }
        var offsets = new ulong[handles.Count];
        var values = new CacheValue[handles.Count];
        var pins = new LruHandle?[handles.Count];
        if (handles.Count == 0)
        {
            return new PinnedPartitions(offsets, values, pins, null);
        }
        LruCache? cache = _options.BlockCache;
        BlockHandle last = handles[^1];
        ulong start = handles[0].Offset;
        var span = new BlockHandle(start, last.Offset + last.Size - start);
        BlockScratch raw = ReadRawBlock(span, verifyChecksum: false, kind + "s", out int size);
        int made = 0;
        try
        {
            for (; made < handles.Count; made++)
            {
                BlockHandle h = handles[made];
                if (h.Size > (ulong)size || h.Offset - start > (ulong)size - h.Size)
                {
                    throw new KvCorruptionException($"{FileName}: {kind} {h} extends past the last partition.");
                }
                ReadOnlySpan<byte> block = raw.Span.Slice((int)(h.Offset - start), (int)h.Size + TableFormat.BlockTrailerSize);
                VerifyBlockChecksum(block, h, kind);
                CacheValue value = role == CacheEntryRole.Filter ? DecodeFilter(block, h) : DecodeNativeBlock(block, h, role, kind);
                offsets[made] = h.Offset;
                values[made] = value;
                if (cache != null && cache.TryInsert(new CacheKey(_cacheId, h.Offset), value, CachePriority.High, out LruHandle? pin))
                {
                    RecordInsert(pin!.Value, role);
                    pins[made] = pin;
                }
            }
        }
        catch
        {
            for (int i = 0; i < made; i++)
            {
                if (pins[i] is LruHandle pin)
                {
                    cache!.Release(pin);
                }
                else
                {
                    values[i].Free();
                }
            }
            throw;
        }
        finally
        {
            raw.Dispose();
        }
        return new PinnedPartitions(offsets, values, pins, cache);
    }

    /// <summary>A filter partition (payload and trailer, checksum verified) loaded into a cache value that stays in the primary cache.</summary>
    private FilterCacheValue DecodeFilter(ReadOnlySpan<byte> raw, BlockHandle handle)
    {
        int size = raw.Length - TableFormat.BlockTrailerSize;
        if ((Compression.CompressionType)raw[size] != Compression.CompressionType.None)
        {
            using Block block = DecodeNativeBlock(raw, handle, CacheEntryRole.Filter, "filter partition");
            return FilterCacheValue.Rent(_options.FilterPolicy!.LoadReader(block.Contents, _options.FilterAllocator), block.Length, demotable: false);
        }
        return FilterCacheValue.Rent(_options.FilterPolicy!.LoadReader(raw[..size], _options.FilterAllocator), size, demotable: false);
    }
}
