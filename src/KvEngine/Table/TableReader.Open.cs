using System.Text;
using KvEngine.Cache;
using KvEngine.Filters;
using KvEngine.Storage;

namespace KvEngine.Table;

/// <summary>Opening a <see cref="TableReader"/>: footer, metaindex, properties, index and filter, and the pinning decisions.</summary>
internal sealed partial class TableReader
{
    private TableReader(IRandomAccessFile file, long fileSize, TableOptions options, string fileName, Footer footer, bool maybeFlushed, OpenFileLimiter? limiter,
        ulong largestSequence)
    {
        _file = file;
        _alignment = file.Alignment;
        _limiter = limiter;
        _fileSize = (ulong)fileSize;
        _options = options;
        FileName = fileName;
        Footer = footer;
        _cacheId = options.BlockCache?.NewId() ?? 0;

        using Block metaIndex = ReadMetaBlock(footer.MetaIndex, "metaindex");
        BlockHandle? properties = null;
        BlockHandle? filter = null;
        string? fullFilterKey = options.FilterPolicy == null ? null : TableFormat.FullFilterBlockPrefix + options.FilterPolicy.Name;
        string? partitionedFilterKey = options.FilterPolicy == null ? null : TableFormat.PartitionedFilterBlockPrefix + options.FilterPolicy.Name;
        var cursor = new BlockCursor(metaIndex, BlockKeyFormat.Bytewise);
        try
        {
            for (cursor.SeekToFirst(); cursor.Valid; cursor.Next())
            {
                ReadOnlySpan<byte> value = cursor.Value;
                if (!BlockHandle.TryDecode(ref value, out BlockHandle handle))
                {
                    throw new KvCorruptionException($"{fileName}: malformed block handle in metaindex entry.");
                }
                string name = Encoding.UTF8.GetString(cursor.Key);
                if (name is TableFormat.PropertiesBlockName or TableFormat.LegacyPropertiesBlockName)
                {
                    properties = handle;
                }
                else if (name == TableFormat.RangeDelBlockName)
                {
                    RangeDelHandle = handle;
                }
                else if (name == fullFilterKey)
                {
                    filter = handle;
                    _partitionedFilter = false;
                }
                else if (name == partitionedFilterKey && filter == null)
                {
                    filter = handle;
                    _partitionedFilter = true;
                }
            }
        }
        finally
        {
            cursor.Dispose();
        }

        if (properties is BlockHandle ph)
        {
            Properties = ReadProperties(ph);
        }
        else
        {
            Properties = new TableProperties();
        }
        GlobalSequenceNumber = ExternalSstFile.GlobalSequenceNumber(Properties, largestSequence, fileName);
        _twoLevel = Properties.IndexType == IndexType.TwoLevelIndexSearch;
        _indexHasFirstKey = Properties.IndexType == IndexType.BinarySearchWithFirstKey;
        _indexKeyFormat = Properties.IndexKeyIsUserKey != 0 ? BlockKeyFormat.UserKeyIndex : BlockKeyFormat.InternalKey;
        _indexValueFormat = Properties.IndexValueIsDeltaEncoded != 0 ? IndexValueFormat.DeltaHandle : IndexValueFormat.Handle;
        _indexHandle = footer.Index;

        // RocksDB's PrefetchIndexAndFilterBlocks: which metadata stays pinned for the reader's life.
        bool pinTopLevel = IsPinned(options.TopLevelIndexPinning, options.PinTopLevelIndexAndFilter ? PinningTier.All : PinningTier.None, maybeFlushed);
        bool pinPartitions = IsPinned(options.PartitionPinning, options.PinL0FilterAndIndexBlocksInCache ? PinningTier.FlushedAndSimilar : PinningTier.None, maybeFlushed);
        bool pinUnpartitioned = IsPinned(options.UnpartitionedPinning, options.PinL0FilterAndIndexBlocksInCache ? PinningTier.FlushedAndSimilar : PinningTier.None, maybeFlushed);
        LruCache? cache = options.CacheIndexAndFilterBlocks ? options.BlockCache : null;
        try
        {
            if (cache == null)
            {
                // Native, freed with the reader: a managed index would land on the large-object heap
                // (a 64 MiB table's is ~0.5 MiB) and stay there after the table is obsolete until a
                // full collection. Iterators check IsDisposed before touching it (see TableIterator).
                _indexBlock = ReadNativeBlock(footer.Index, verifyChecksum: true, CacheEntryRole.Index, _twoLevel ? "top-level index" : "index");
                BlockCursor indexCursor = NewIndexCursor(_indexBlock);
                indexCursor.BuildRestartPrefixes(); // the reader's own index: searched for its whole life
                indexCursor.Dispose();
            }
            else
            {
                _pinnedIndex = InsertMetaBlock(cache, footer.Index, CacheEntryRole.Index, _twoLevel ? "top-level index" : "index",
                    _twoLevel ? pinTopLevel : pinUnpartitioned, out _indexBlock);
            }
            if (_twoLevel && pinPartitions)
            {
                BlockLease top = AcquireIndex(fillCache: true);
                try
                {
                    _pinnedIndexPartitions = PinPartitions(top.Block, CacheEntryRole.Index);
                }
                finally
                {
                    top.Release();
                }
            }

            if (filter is BlockHandle fh && options.FilterPolicy != null)
            {
                _filterHandle = fh;
                _hasFilter = true;
                // RocksDB: whole_key_filtering = the option && the table's property (absent: supported);
                // prefix filtering only under the extractor the table was written with.
                _filterHasWholeKeys = options.WholeKeyFiltering
                    && (!Properties.UserCollected.ContainsKey(TablePropertyNames.WholeKeyFiltering) || Properties.WholeKeyFiltering);
                bool prefixFiltering = !Properties.UserCollected.ContainsKey(TablePropertyNames.PrefixFiltering) || Properties.PrefixFiltering;
                _prefixExtractor = prefixFiltering && options.PrefixExtractor is { } extractor
                    && string.Equals(Properties.PrefixExtractorName, extractor.Name, StringComparison.Ordinal) ? extractor : null;
                if (_partitionedFilter)
                {
                    if (cache == null)
                    {
                        _filterIndexBlock = ReadMetaBlock(fh, "top-level filter index");
                    }
                    else
                    {
                        _pinnedFilter = InsertMetaBlock(cache, fh, CacheEntryRole.FilterMeta, "top-level filter index", pinTopLevel, out _filterIndexBlock);
                    }
                    if (pinPartitions)
                    {
                        BlockLease top = AcquireFilterIndex(fillCache: true);
                        try
                        {
                            _pinnedFilterPartitions = PinPartitions(top.Block, CacheEntryRole.Filter);
                            FilterMemoryUsage = _pinnedFilterPartitions.Bytes;
                        }
                        finally
                        {
                            top.Release();
                        }
                    }
                }
                else
                {
                    IFilterBitsReader reader = LoadFilter(fh, out int length);
                    FilterMemoryUsage = reader is FastLocalBloomNativeReader native ? native.MemoryUsage : length;
                    _filterNumProbes = reader is FastLocalBloomNativeReader n ? n.NumProbes : 0;
                    var value = FilterCacheValue.Rent(reader, length);
                    if (cache == null || !cache.TryInsert(new CacheKey(_cacheId, fh.Offset), value, CachePriority.High, out LruHandle? h))
                    {
                        _filter = reader;
                    }
                    else
                    {
                        RecordInsert(h!.Value, CacheEntryRole.Filter);
                        if (pinUnpartitioned)
                        {
                            _pinnedFilter = h;
                        }
                        else
                        {
                            cache.Release(h.Value);
                        }
                    }
                }
            }
        }
        catch
        {
            // Opening failed after some metadata went into the cache: unpin it (the entries age out).
            ReleaseMetadata();
            throw;
        }
    }

    /// <summary>
    /// Opens a table and takes ownership of <paramref name="file"/> (disposed with the reader, or
    /// at once when opening fails). Throws <see cref="KvCorruptionException"/> when the table is malformed.
    /// <paramref name="maybeFlushed"/> marks a level-0 table no larger than
    /// <see cref="TableOptions.MaxFileSizeForL0MetaPin"/> (RocksDB's "flushed and similar" pinning
    /// tier; the fallback for PinL0FilterAndIndexBlocksInCache). With a <paramref name="limiter"/>
    /// the file may be closed while idle and reopened by name.
    /// </summary>
    /// <paramref name="largestSequence"/> is the file's largest_seqno from the MANIFEST, which gives
    /// an ingested external file its global sequence number when the file records 0
    /// (<see cref="ExternalSstFile.GlobalSequenceNumber"/>); <see cref="Format.InternalKeys.MaxSequenceNumber"/>: unknown.
    public static TableReader Open(IRandomAccessFile file, long fileSize, TableOptions options, string fileName, bool maybeFlushed = false, OpenFileLimiter? limiter = null,
        ulong largestSequence = Format.InternalKeys.MaxSequenceNumber)
    {
        ArgumentNullException.ThrowIfNull(file);
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(fileName);
        try
        {
            if (fileSize < TableFormat.FooterSize)
            {
                throw new KvCorruptionException($"{fileName}: file of {fileSize} bytes is too short to be a table.");
            }
            Span<byte> footerBytes = stackalloc byte[TableFormat.FooterSize];
            if (file.Read(fileSize - TableFormat.FooterSize, footerBytes) != TableFormat.FooterSize)
            {
                throw new KvCorruptionException($"{fileName}: truncated while reading the footer.");
            }
            Footer footer = Footer.Decode(footerBytes, fileName);
            var reader = new TableReader(file, fileSize, options, fileName, footer, maybeFlushed, limiter, largestSequence);
            reader._deferrable = true; // opening reads synchronously; lookups through the reader may defer from now on
            if (limiter != null)
            {
                reader._limiter!.Register(reader);
            }
            return reader;
        }
        catch
        {
            file.Dispose();
            throw;
        }
    }

    /// <summary>RocksDB's is_pinned: a tier, or the fallback tier the older flags give.</summary>
    private static bool IsPinned(PinningTier tier, PinningTier fallback, bool maybeFlushed) => tier switch
    {
        PinningTier.Fallback => IsPinned(fallback, PinningTier.None, maybeFlushed),
        PinningTier.FlushedAndSimilar => maybeFlushed,
        PinningTier.All => true,
        _ => false,
    };

    /// <summary>
    /// Reads a metadata block into the cache at high priority: pinned (the handle is returned) or
    /// released at once; when the cache has no room the reader keeps the block (<paramref name="owned"/>).
    /// </summary>
    private LruHandle? InsertMetaBlock(LruCache cache, BlockHandle handle, CacheEntryRole role, string kind, bool pin, out Block? owned)
    {
        Block block = ReadNativeBlock(handle, verifyChecksum: true, role, kind);
        owned = null;
        if (!cache.TryInsert(new CacheKey(_cacheId, handle.Offset), block, CachePriority.High, out LruHandle? h))
        {
            owned = block; // strict capacity and no room: the reader keeps it
            return null;
        }
        RecordInsert(h!.Value, role);
        if (pin)
        {
            return h;
        }
        cache.Release(h.Value);
        return null;
    }
}
