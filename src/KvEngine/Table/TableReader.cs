using System.Buffers;
using System.Text;
using KvEngine.Cache;
using KvEngine.Compression;
using KvEngine.Filters;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Memory;
using KvEngine.Storage;
using KvEngine.Util;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Table;

/// <summary>
/// Reads one block-based table (format_version 2..5; layout in <see cref="TableBuilder"/>).
/// Open reads the footer, metaindex, properties, index and filter. The index and filter stay in the
/// reader (the filter in native memory from <see cref="TableOptions.FilterAllocator"/>), or, with
/// <see cref="TableOptions.CacheIndexAndFilterBlocks"/>, go into the block cache at high priority,
/// are looked up per read and may be evicted and read again (pinned for the reader's lifetime when
/// opened with pinMetaBlocks); data
/// blocks are read on demand with positional I/O through <see cref="ReadDataBlock"/>: looked up in
/// the block cache (<see cref="TableOptions.BlockCache"/>) under (reader id from the cache, block
/// offset); on a miss read, verified and decompressed into a native buffer and inserted (unless the
/// read says not to fill the cache). A hit costs no I/O, checksum, decompression or allocation.
/// <para>
/// Thread-safe: TryGet, KeyMayMatch and NewIterator may run concurrently. Owns the file, the
/// filter's memory and its pins on cached blocks and releases them on Dispose, which must wait until every iterator it handed out is disposed.
/// Corrupt contents raise <see cref="KvCorruptionException"/> naming the file.
/// </para>
/// </summary>
internal sealed partial class TableReader : ICacheValueFactory, IDisposable
{
    private const int StackKeyLimit = 256;

    private readonly object _fileGate = new();
    private readonly OpenFileLimiter? _limiter;
    private IRandomAccessFile? _file;
    private int _fileUsers; // reads using _file; -1 while it is closed by the limiter
    private long _lastFileUse;
    private readonly ulong _fileSize;
    private readonly TableOptions _options;
    private readonly Block? _indexBlock; // null when the index lives in the block cache
    private readonly BlockHandle _indexHandle;
    private readonly BlockKeyFormat _indexKeyFormat;
    private readonly IndexValueFormat _indexValueFormat;
    private readonly bool _indexHasFirstKey;
    private readonly IFilterBitsReader? _filter; // null when the filter lives in the block cache
    private readonly BlockHandle _filterHandle;
    private readonly bool _hasFilter;
    private readonly int _filterNumProbes;
    private readonly bool _filterHasWholeKeys;
    private readonly ulong _cacheId;
    private readonly LruHandle? _pinnedIndex;
    private readonly LruHandle? _pinnedFilter;

    private TableReader(IRandomAccessFile file, long fileSize, TableOptions options, string fileName, Footer footer, bool pinMetaBlocks, OpenFileLimiter? limiter)
    {
        _file = file;
        _limiter = limiter;
        _fileSize = (ulong)fileSize;
        _options = options;
        FileName = fileName;
        Footer = footer;
        _cacheId = options.BlockCache?.NewId() ?? 0;

        using Block metaIndex = ReadMetaBlock(footer.MetaIndex, "metaindex");
        BlockHandle? properties = null;
        BlockHandle? filter = null;
        string? filterKey = options.FilterPolicy == null ? null : TableFormat.FullFilterBlockPrefix + options.FilterPolicy.Name;
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
                else if (name == filterKey)
                {
                    filter = handle;
                }
            }
        }
        finally
        {
            cursor.Dispose();
        }

        if (properties is BlockHandle ph)
        {
            using Block propsBlock = ReadMetaBlock(ph, "properties");
            Properties = TablePropertiesCodec.Decode(propsBlock, ph.Offset);
        }
        else
        {
            Properties = new TableProperties();
        }
        if (Properties.IndexType == IndexType.TwoLevelIndexSearch)
        {
            throw new KvException($"{fileName}: partitioned (two-level) indexes are not supported yet.");
        }
        _indexHasFirstKey = Properties.IndexType == IndexType.BinarySearchWithFirstKey;
        _indexKeyFormat = Properties.IndexKeyIsUserKey != 0 ? BlockKeyFormat.UserKeyIndex : BlockKeyFormat.InternalKey;
        _indexValueFormat = Properties.IndexValueIsDeltaEncoded != 0 ? IndexValueFormat.DeltaHandle : IndexValueFormat.Handle;
        _indexHandle = footer.Index;
        LruCache? cache = options.CacheIndexAndFilterBlocks ? options.BlockCache : null;
        if (cache == null)
        {
            _indexBlock = ReadMetaBlock(footer.Index, "index");
        }
        else
        {
            Block index = ReadNativeBlock(footer.Index, verifyChecksum: true, CacheEntryRole.Index);
            if (!cache.TryInsert(new CacheKey(_cacheId, footer.Index.Offset), index, CachePriority.High, out LruHandle? h))
            {
                _indexBlock = index; // strict capacity and no room: the reader keeps it
            }
            else
            {
                RecordInsert(index, h!, CacheEntryRole.Index);
                if (pinMetaBlocks)
                {
                    _pinnedIndex = h;
                }
                else
                {
                    cache.Release(h!);
                }
            }
        }

        try
        {
            if (filter is BlockHandle fh && options.FilterPolicy != null)
            {
                _filterHandle = fh;
                _hasFilter = true;
                IFilterBitsReader reader = LoadFilter(fh, out int length);
                FilterMemoryUsage = reader is FastLocalBloomNativeReader native ? native.MemoryUsage : length;
                _filterNumProbes = reader is FastLocalBloomNativeReader n ? n.NumProbes : 0;
                _filterHasWholeKeys = !Properties.UserCollected.ContainsKey(TablePropertyNames.WholeKeyFiltering) || Properties.WholeKeyFiltering;
                var value = new FilterCacheValue(reader, length);
                if (cache == null || !cache.TryInsert(new CacheKey(_cacheId, fh.Offset), value, CachePriority.High, out LruHandle? h))
                {
                    _filter = reader;
                }
                else
                {
                    RecordInsert(value, h!, CacheEntryRole.Filter);
                    if (pinMetaBlocks)
                    {
                        _pinnedFilter = h;
                    }
                    else
                    {
                        cache.Release(h!);
                    }
                }
            }
        }
        catch
        {
            // Opening failed after the index went into the cache: unpin it (the entry ages out).
            _indexBlock?.Dispose();
            if (_pinnedIndex != null)
            {
                cache!.Release(_pinnedIndex);
            }
            throw;
        }
    }

    public string FileName { get; }

    public Footer Footer { get; }

    public TableProperties Properties { get; }

    /// <summary>
    /// Bytes the loaded filter holds in memory: the usable (size-class) size of its native
    /// allocation, or the block length for filters kept on the managed heap; 0 without a filter.
    /// </summary>
    public long FilterMemoryUsage { get; }

    /// <summary>True when a filter block was loaded (the metaindex names the configured policy).</summary>
    public bool HasFilter => _hasFilter;

    /// <summary>
    /// Opens a table and takes ownership of <paramref name="file"/> (disposed with the reader, or
    /// at once when opening fails). Throws <see cref="KvCorruptionException"/> when the table is malformed.
    /// With cached index and filter blocks, <paramref name="pinMetaBlocks"/> holds them in the cache
    /// for the reader's lifetime (level-0 tables under PinL0FilterAndIndexBlocksInCache). With a
    /// <paramref name="limiter"/> the file may be closed while idle and reopened by name.
    /// </summary>
    public static TableReader Open(IRandomAccessFile file, long fileSize, TableOptions options, string fileName, bool pinMetaBlocks = false, OpenFileLimiter? limiter = null)
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
            var reader = new TableReader(file, fileSize, options, fileName, footer, pinMetaBlocks, limiter);
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

    /// <summary>False only when the filter proves <paramref name="userKey"/> is absent.</summary>
    public bool KeyMayMatch(ReadOnlySpan<byte> userKey, bool fillCache = true)
    {
        if (!_hasFilter || !_filterHasWholeKeys)
        {
            return true;
        }
        if (_filter != null)
        {
            return _filter.MayMatch(userKey);
        }
        if (_pinnedFilter != null)
        {
            return ((FilterCacheValue)_pinnedFilter.Value).Reader.MayMatch(userKey);
        }
        return CachedFilterMayMatch(userKey, fillCache);
    }

    /// <summary>
    /// Finds the newest entry for <paramref name="userKey"/> with sequence &lt;= <paramref name="sequence"/>.
    /// Returns false when there is none. For Value and Merge entries the value is appended to
    /// <paramref name="valueOut"/>; Deletion and SingleDeletion append nothing.
    /// </summary>
    public bool TryGet(ReadOnlySpan<byte> userKey, ulong sequence, IBufferWriter<byte> valueOut, out ValueType type, bool verifyChecksums, bool fillCache = true) =>
        TryGet(userKey, sequence, valueOut, out type, verifyChecksums, fillCache, coveringSequence: 0);

    /// <summary>
    /// <see cref="TryGet(ReadOnlySpan{byte}, ulong, IBufferWriter{byte}, out ValueType, bool, bool)"/>
    /// under a range tombstone at <paramref name="coveringSequence"/> (0: none): a found entry with
    /// a smaller sequence is reported as a Deletion and nothing is appended.
    /// </summary>
    public bool TryGet(ReadOnlySpan<byte> userKey, ulong sequence, IBufferWriter<byte> valueOut, out ValueType type, bool verifyChecksums, bool fillCache, ulong coveringSequence)
    {
        ArgumentNullException.ThrowIfNull(valueOut);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(sequence, InternalKeys.MaxSequenceNumber);
        type = default;
        KvStatistics? stats = _options.Statistics;
        if (!KeyMayMatch(userKey, fillCache))
        {
            stats?.Record(Ticker.BloomFilterUseful);
            return false;
        }
        if (_hasFilter)
        {
            stats?.Record(Ticker.BloomFilterFullPositive);
        }
        int seekLength = userKey.Length + InternalKeys.TrailerSize;
        byte[]? rented = seekLength > StackKeyLimit ? ArrayPool<byte>.Shared.Rent(seekLength) : null;
        Span<byte> seekKey = rented != null ? rented.AsSpan(0, seekLength) : stackalloc byte[seekLength];
        InternalKeys.Encode(seekKey, userKey, sequence, ValueType.ValueTypeForSeek);
        BlockLease indexLease = AcquireIndex(fillCache);
        BlockCursor index = NewIndexCursor(indexLease.Block);
        try
        {
            for (index.Seek(seekKey); index.Valid; index.Next())
            {
                BlockLease lease = ReadDataBlock(index.Handle, verifyChecksums, fillCache);
                var data = new BlockCursor(lease.Block, BlockKeyFormat.InternalKey);
                try
                {
                    data.Seek(seekKey);
                    if (!data.Valid)
                    {
                        continue; // the target sorts after this block's last key; try the next block
                    }
                    ReadOnlySpan<byte> found = data.Key;
                    if (!InternalKeys.UserKey(found).SequenceEqual(userKey))
                    {
                        return false;
                    }
                    type = InternalKeys.Type(found);
                    if (_hasFilter)
                    {
                        stats?.Record(Ticker.BloomFilterFullTruePositive);
                    }
                    if (InternalKeys.Sequence(found) < coveringSequence)
                    {
                        type = ValueType.Deletion; // deleted by a range tombstone
                        return true;
                    }
                    switch (type)
                    {
                        case ValueType.Value:
                        case ValueType.Merge:
                            valueOut.Write(data.Value);
                            return true;
                        case ValueType.Deletion:
                        case ValueType.SingleDeletion:
                            return true;
                        default:
                            throw new KvCorruptionException($"{FileName}: unexpected value type 0x{(byte)type:x2} in a data block.");
                    }
                }
                finally
                {
                    data.Dispose();
                    lease.Release();
                }
            }
            return false;
        }
        finally
        {
            index.Dispose();
            indexLease.Release();
            if (rented != null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
    }

    /// <summary>A two-level iterator over every point entry.</summary>
    public InternalIterator NewIterator(bool verifyChecksums, bool fillCache = true) => new TableIterator(this, verifyChecksums, fillCache);

    /// <summary>A cursor over an index block from <see cref="AcquireIndex"/>; the caller disposes it.</summary>
    internal BlockCursor NewIndexCursor(Block index) => new(index, _indexKeyFormat, _indexValueFormat, _indexHasFirstKey);

    public void Dispose()
    {
        bool wasOpen = Interlocked.Exchange(ref _fileUsers, -1) >= 0;
        if (wasOpen)
        {
            _file!.Dispose();
            _file = null;
        }
        _limiter?.Unregister(this, wasOpen);
        (_filter as IDisposable)?.Dispose();
        _indexBlock?.Dispose();
        if (_pinnedIndex != null)
        {
            _options.BlockCache!.Release(_pinnedIndex);
        }
        if (_pinnedFilter != null)
        {
            _options.BlockCache!.Release(_pinnedFilter);
        }
    }

    private Block ReadMetaBlock(BlockHandle handle, string kind)
    {
        byte[] data = ReadBlockContents(handle, verifyChecksum: true, pooled: false, kind, out int length);
        return new Block(data, length, pooled: false, isDataBlock: false, FileName, kind, handle.Offset);
    }

    /// <summary>True while the file is open (see <see cref="OpenFileLimiter"/>).</summary>
    internal bool FileIsOpen => Volatile.Read(ref _fileUsers) >= 0;

    /// <summary>When a read last used the file (<see cref="Environment.TickCount64"/>).</summary>
    internal long LastFileUse => Volatile.Read(ref _lastFileUse);

    /// <summary>
    /// Closes the file if no read is using it (the limiter's eviction); false otherwise.
    /// Called only under the limiter's lock (so calls never overlap); takes no reader lock, so a
    /// reader reopening its file (file gate, then the limiter's lock) cannot deadlock with it. The
    /// file read before the exchange is the open one: only a close (serialized here) and a reopen
    /// after it could change it.
    /// </summary>
    internal bool TryCloseFile()
    {
        IRandomAccessFile? file = Volatile.Read(ref _file);
        if (Interlocked.CompareExchange(ref _fileUsers, -1, 0) != 0)
        {
            return false;
        }
        file!.Dispose();
        return true;
    }

    /// <summary>A positional read through the file, reopening it when the limiter closed it.</summary>
    private int ReadFile(long offset, Span<byte> buffer)
    {
        while (true)
        {
            int users = Volatile.Read(ref _fileUsers);
            if (users >= 0)
            {
                if (Interlocked.CompareExchange(ref _fileUsers, users + 1, users) == users)
                {
                    break;
                }
                continue;
            }
            lock (_fileGate)
            {
                if (Volatile.Read(ref _fileUsers) == -1)
                {
                    if (_limiter == null)
                    {
                        throw new ObjectDisposedException(FileName);
                    }
                    Volatile.Write(ref _file, _limiter.Reopen(this));
                    _options.Statistics?.Record(Ticker.NoFileOpens);
                    Volatile.Write(ref _fileUsers, 0);
                }
            }
        }
        try
        {
            Volatile.Write(ref _lastFileUse, Environment.TickCount64);
            return _file!.Read(offset, buffer);
        }
        finally
        {
            Interlocked.Decrement(ref _fileUsers);
        }
    }

    /// <summary>Reads, verifies and decompresses one block into a native buffer from <see cref="TableOptions.BlockAllocator"/>.</summary>
    private Block ReadNativeBlock(BlockHandle handle, bool verifyChecksum, CacheEntryRole role)
    {
        string kind = role == CacheEntryRole.Data ? "data" : "index";
        byte[] raw = ReadRawBlock(handle, verifyChecksum, kind, out int size);
        NativeBuffer output = default;
        try
        {
            var type = (CompressionType)raw[size];
            if (type == CompressionType.None)
            {
                output = _options.BlockAllocator.Allocate(size);
                raw.AsSpan(0, size).CopyTo(output.Span);
            }
            else
            {
                int uncompressed = BlockCompression.ReadUncompressedLength(type, raw.AsSpan(0, size), _options.MaxUncompressedBlockSize, FileName, handle.Offset, out int header);
                output = _options.BlockAllocator.Allocate(uncompressed);
                BlockCompression.Decompress(type, raw.AsSpan(header, size - header), output.Span, FileName, handle.Offset);
            }
        }
        catch
        {
            output.Dispose();
            throw;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(raw);
        }
        return new Block(output, role, FileName, kind, handle.Offset);
    }

    /// <summary>Reads one block and its trailer into a pooled array and verifies the checksum; the caller returns the array.</summary>
    private byte[] ReadRawBlock(BlockHandle handle, bool verifyChecksum, string kind, out int size)
    {
        ulong limit = _fileSize - TableFormat.FooterSize;
        if (handle.Size > limit || handle.Offset > limit - handle.Size || limit - handle.Size - handle.Offset < TableFormat.BlockTrailerSize)
        {
            throw new KvCorruptionException($"{FileName}: {kind} block {handle} extends past the end of the table data (file size {_fileSize}).");
        }
        size = (int)handle.Size;
        int total = size + TableFormat.BlockTrailerSize;
        if (_options.Statistics is { } stats)
        {
            stats.Record(Ticker.BlockReads);
            stats.Record(Ticker.BlockReadBytes, total);
        }
        byte[] raw = ArrayPool<byte>.Shared.Rent(total);
        try
        {
            if (ReadFile((long)handle.Offset, raw.AsSpan(0, total)) != total)
            {
                throw new KvCorruptionException($"{FileName}: truncated while reading {kind} block {handle}.");
            }
            if (verifyChecksum)
            {
                byte typeByte = raw[size];
                uint stored = Coding.DecodeFixed32(raw.AsSpan(size + 1));
                uint actual = BlockChecksum.Compute(Footer.ChecksumType, raw.AsSpan(0, size), typeByte);
                if (stored != actual)
                {
                    throw new KvCorruptionException(
                        $"{FileName}: block checksum mismatch in {kind} block {handle}: stored 0x{stored:x8}, computed 0x{actual:x8}.");
                }
            }
            return raw;
        }
        catch
        {
            ArrayPool<byte>.Shared.Return(raw);
            throw;
        }
    }

    /// <summary>
    /// Reads, verifies and decompresses one block. Pooled results come from
    /// <see cref="ArrayPool{T}.Shared"/> and may be longer than <paramref name="length"/>.
    /// </summary>
    private byte[] ReadBlockContents(BlockHandle handle, bool verifyChecksum, bool pooled, string kind, out int length)
    {
        byte[] raw = ReadRawBlock(handle, verifyChecksum, kind, out int size);
        bool returnRaw = true;
        try
        {
            var type = (CompressionType)raw[size];
            if (type == CompressionType.None)
            {
                length = size;
                if (pooled)
                {
                    returnRaw = false;
                    return raw;
                }
                return raw.AsSpan(0, size).ToArray();
            }
            string source = FileName;
            int uncompressed = BlockCompression.ReadUncompressedLength(type, raw.AsSpan(0, size), _options.MaxUncompressedBlockSize, source, handle.Offset, out int header);
            byte[] output = pooled ? ArrayPool<byte>.Shared.Rent(Math.Max(uncompressed, 1)) : new byte[uncompressed];
            try
            {
                BlockCompression.Decompress(type, raw.AsSpan(header, size - header), output.AsSpan(0, uncompressed), source, handle.Offset);
            }
            catch
            {
                if (pooled)
                {
                    ArrayPool<byte>.Shared.Return(output);
                }
                throw;
            }
            length = uncompressed;
            return output;
        }
        finally
        {
            if (returnRaw)
            {
                ArrayPool<byte>.Shared.Return(raw);
            }
        }
    }
}
