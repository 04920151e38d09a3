using System.Runtime.CompilerServices;
using KvEngine.Cache;
using KvEngine.Filters;
using KvEngine.Memory;

namespace KvEngine.Table;

/// <summary>The block cache side of <see cref="TableReader"/>: data, index and filter blocks through <see cref="TableOptions.BlockCache"/>.</summary>
internal sealed partial class TableReader
{
    /// <summary>The index block: the reader's own, the pinned cache entry, or looked up (and on a miss read and, with <paramref name="fillCache"/>, inserted at high priority).</summary>
    internal BlockLease AcquireIndex(bool fillCache)
    {
        if (_indexBlock != null)
        {
            return new BlockLease(_indexBlock, null, null, owned: false);
        }
        if (_pinnedIndex is LruHandle pinned)
        {
            return new BlockLease((Block)pinned.Value, null, null, owned: false);
        }
        return AcquireMetaBlock(_indexHandle, CacheEntryRole.Index, _twoLevel ? "top-level index" : "index", fillCache);
    }

    /// <summary>
    /// A metadata block (index, top-level index, partition, top-level filter index) through the
    /// block cache at high priority: looked up, or read and, with <paramref name="fillCache"/>,
    /// inserted. Without a block cache the block is read and owned by the lease.
    /// </summary>
    private BlockLease AcquireMetaBlock(BlockHandle handle, CacheEntryRole role, string kind, bool fillCache)
    {
        LruCache? cache = _options.BlockCache;
        if (cache == null)
        {
            return new BlockLease(ReadNativeBlock(handle, verifyChecksum: true, role, kind), null, null);
        }
        var key = new CacheKey(_cacheId, handle.Offset);
        LruHandle? h = cache.Lookup(key, this, CachePriority.High, _options.Statistics, out _);
        if (h is LruHandle hit)
        {
            RecordHit(role);
            return BlockLease.Cached(hit, cache, FileName, kind);
        }
        RecordMiss(role);
        Block block = ReadNativeBlock(handle, verifyChecksum: true, role, kind);
        if (fillCache && cache.TryInsertBlock(key, block, CachePriority.High, out h))
        {
            RecordInsert(h!.Value, role);
            return new BlockLease(block, h, cache);
        }
        if (fillCache)
        {
            _options.Statistics?.Record(Ticker.BlockCacheAddFailures);
        }
        return new BlockLease(block, null, null);
    }

    /// <summary>
    /// The data block at <paramref name="handle"/>: from the block cache, or read and (with
    /// <paramref name="fillCache"/>) inserted. The caller releases the lease.
    /// </summary>
    internal BlockLease ReadDataBlock(BlockHandle handle, bool verifyChecksum, bool fillCache)
    {
        int fileReads = 0;
        return ReadDataBlock(handle, verifyChecksum, fillCache, ref Unsafe.NullRef<Readahead>(), ref fileReads);
    }

    /// <summary>
    /// <see cref="ReadDataBlock(BlockHandle, bool, bool)"/> for a point lookup: adds one to
    /// <paramref name="fileReads"/> when the block came from the file (not the cache), what the
    /// lookup's GetStats report.
    /// </summary>
    internal BlockLease ReadDataBlock(BlockHandle handle, bool verifyChecksum, bool fillCache, ref int fileReads) =>
        ReadDataBlock(handle, verifyChecksum, fillCache, ref Unsafe.NullRef<Readahead>(), ref fileReads);

    /// <summary>
    /// <see cref="ReadDataBlock(BlockHandle, bool, bool)"/> for an iterator: the block is tracked by
    /// <paramref name="readahead"/> (a null reference: none), which serves or reads ahead a block
    /// that must come from the file.
    /// </summary>
    internal BlockLease ReadDataBlock(BlockHandle handle, bool verifyChecksum, bool fillCache, ref Readahead readahead)
    {
        int fileReads = 0;
        return ReadDataBlock(handle, verifyChecksum, fillCache, ref readahead, ref fileReads);
    }

    // The data block from the cache, or from the file (through readahead when it is not a null
    // reference), counted in fileReads.
    private BlockLease ReadDataBlock(BlockHandle handle, bool verifyChecksum, bool fillCache, ref Readahead readahead, ref int fileReads)
    {
        if (!Unsafe.IsNullRef(ref readahead))
        {
            readahead.Track((long)handle.Offset, (int)handle.Size + TableFormat.BlockTrailerSize);
        }
        LruCache? cache = _options.BlockCache;
        if (cache == null)
        {
            fileReads++;
            return new BlockLease(ReadNativeDataBlock(handle, verifyChecksum, ref readahead), null, null);
        }
        KvStatistics? stats = _options.Statistics;
        var key = new CacheKey(_cacheId, handle.Offset);
        LruHandle? h = cache.Lookup(key, this, CachePriority.Low, stats, out _);
        if (h is LruHandle hit)
        {
            Block.PrefetchRestartIntervals(hit);
            RecordHit(CacheEntryRole.Data);
            return BlockLease.Cached(hit, cache, FileName, "data");
        }
        RecordMiss(CacheEntryRole.Data);
        fileReads++;
        Block block = ReadNativeDataBlock(handle, verifyChecksum, ref readahead);
        return LeaseDataBlockRead(cache, key, block, fillCache);
    }

    /// <summary>A data block just read (a cache miss): inserted into <paramref name="cache"/> with <paramref name="fillCache"/>, else owned by the lease.</summary>
    private BlockLease LeaseDataBlockRead(LruCache cache, in CacheKey key, Block block, bool fillCache)
    {
        if (!fillCache)
        {
            return new BlockLease(block, null, null);
        }
        if (cache.TryInsertBlock(key, block, CachePriority.Low, out LruHandle? h))
        {
            RecordInsert(h!.Value, CacheEntryRole.Data);
            return new BlockLease(block, h, cache);
        }
        _options.Statistics?.Record(Ticker.BlockCacheAddFailures);
        return new BlockLease(block, null, null);
    }

    /// <summary>Rebuilds a block promoted from the secondary cache (see <see cref="ICacheValueFactory"/>).</summary>
    public CacheValue Create(NativeBuffer contents, in CacheKey key, CacheEntryRole role)
    {
        if (role != CacheEntryRole.Filter)
        {
            string kind = role switch { CacheEntryRole.Data => "data", CacheEntryRole.FilterMeta => "top-level filter index", _ => "index" };
            return Block.RentNative(contents, role, FileName, kind, key.Offset);
        }
        try
        {
            return FilterCacheValue.Rent(FastLocalBloomNativeReader.Rent(contents, _filterNumProbes), contents.Length + FastLocalBloomMath.MetadataLength);
        }
        catch (ArgumentException e)
        {
            contents.Dispose();
            throw new KvCorruptionException($"{FileName}: filter promoted from the secondary cache is malformed: {e.Message}", e);
        }
    }

    private IFilterBitsReader LoadFilter(BlockHandle handle, out int length, string kind = "filter")
    {
        using BlockScratch contents = ReadBlockContentsScratch(handle, verifyChecksum: true, kind);
        length = contents.Length;
        return _options.FilterPolicy!.LoadReader(contents.Span, _options.FilterAllocator);
    }

    private void RecordHit(CacheEntryRole role)
    {
        if (_options.Statistics is { } stats)
        {
            stats.Record(Ticker.BlockCacheHit);
            stats.Record(role switch { CacheEntryRole.Index => Ticker.BlockCacheIndexHit, CacheEntryRole.Filter or CacheEntryRole.FilterMeta => Ticker.BlockCacheFilterHit, _ => Ticker.BlockCacheDataHit });
        }
    }

    private void RecordMiss(CacheEntryRole role)
    {
        if (_options.Statistics is { } stats)
        {
            stats.Record(Ticker.BlockCacheMiss);
            stats.Record(role switch { CacheEntryRole.Index => Ticker.BlockCacheIndexMiss, CacheEntryRole.Filter or CacheEntryRole.FilterMeta => Ticker.BlockCacheFilterMiss, _ => Ticker.BlockCacheDataMiss });
        }
    }

    private void RecordInsert(in LruHandle handle, CacheEntryRole role)
    {
        if (_options.Statistics is { } stats)
        {
            stats.Record(Ticker.BlockCacheAdd);
            stats.Record(Ticker.BlockCacheBytesInsert, handle.Charge);
            (Ticker add, Ticker bytes) = role switch
            {
                CacheEntryRole.Index => (Ticker.BlockCacheIndexAdd, Ticker.BlockCacheIndexBytesInsert),
                CacheEntryRole.Filter or CacheEntryRole.FilterMeta => (Ticker.BlockCacheFilterAdd, Ticker.BlockCacheFilterBytesInsert),
                _ => (Ticker.BlockCacheDataAdd, Ticker.BlockCacheDataBytesInsert),
            };
            stats.Record(add);
            stats.Record(bytes, handle.Charge);
            stats.Record(Ticker.BlockCacheInsertRequestedBytes, handle.RequestedBytes);
            stats.Record(Ticker.BlockCacheInsertAllocatedBytes, handle.AllocatedBytes);
        }
    }

    /// <summary>
    /// The filter at <paramref name="handle"/> (a full filter, or a filter partition that is not
    /// <paramref name="demotable"/>), from the block cache or loaded (and, with
    /// <paramref name="fillCache"/>, inserted). Without a block cache the filter is loaded for this
    /// lease alone. The caller releases the lease.
    /// </summary>
    private FilterLease AcquireCachedFilter(BlockHandle handle, bool fillCache, bool demotable)
    {
        LruCache? cache = _options.BlockCache;
        KvStatistics? stats = _options.Statistics;
        string kind = demotable ? "filter" : "filter partition";
        if (cache == null)
        {
            return FilterLease.OwnedReader(LoadFilter(handle, out _, kind));
        }
        var key = new CacheKey(_cacheId, handle.Offset);
        LruHandle? h = cache.Lookup(key, this, CachePriority.High, stats, out _);
        if (h is LruHandle hit)
        {
            RecordHit(CacheEntryRole.Filter);
            return FilterLease.Cached(hit, cache);
        }
        RecordMiss(CacheEntryRole.Filter);
        var value = FilterCacheValue.Rent(LoadFilter(handle, out int length, kind), length, demotable);
        if (fillCache && cache.TryInsert(key, value, CachePriority.High, out h))
        {
            RecordInsert(h!.Value, CacheEntryRole.Filter);
            return FilterLease.Cached(h.Value, cache);
        }
        if (fillCache)
        {
            stats?.Record(Ticker.BlockCacheAddFailures);
        }
        return FilterLease.Owned(value);
    }

    /// <summary>
    /// The filter at <paramref name="handle"/> only if the block cache holds it (no I/O, nothing
    /// inserted; KeyMayExist): false when it is not cached.
    /// </summary>
    private bool TryLookupCachedFilter(BlockHandle handle, out FilterLease lease)
    {
        LruCache? cache = _options.BlockCache;
        if (cache?.Lookup(new CacheKey(_cacheId, handle.Offset), this, CachePriority.High, _options.Statistics, out _) is LruHandle h)
        {
            RecordHit(CacheEntryRole.Filter);
            lease = FilterLease.Cached(h, cache);
            return true;
        }
        lease = default;
        return false;
    }
}
