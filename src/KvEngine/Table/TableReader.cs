using System.Buffers;
using System.Runtime.CompilerServices;
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
/// blocks are read on demand with positional I/O through <see cref="ReadDataBlock(BlockHandle, bool, bool)"/>: looked up in
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
    private readonly int _alignment; // the file's direct-I/O alignment (1: buffered); a reopened file has the same
    private volatile bool _disposed;
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
    private readonly KvPrefixExtractor? _prefixExtractor; // set when the filter holds prefixes of this extractor
    private readonly ulong _cacheId;
    private readonly LruHandle? _pinnedIndex;
    private readonly LruHandle? _pinnedFilter; // the filter, or the top-level filter index of a partitioned filter
    private readonly bool _twoLevel; // index partitions under a top-level index
    private readonly bool _partitionedFilter; // filter partitions under a top-level filter index
    private readonly Block? _filterIndexBlock; // the reader's top-level filter index (no CacheIndexAndFilterBlocks)
    private readonly PinnedPartitions? _pinnedIndexPartitions;
    private readonly PinnedPartitions? _pinnedFilterPartitions;

    public string FileName { get; }

    public Footer Footer { get; }

    public TableProperties Properties { get; }

    /// <summary>
    /// Bytes the loaded filter holds in memory: the usable (size-class) size of its native
    /// allocation, or the block length for filters kept on the managed heap; 0 without a filter.
    /// Partitioned filters: the pinned partitions' bytes, or 0 when the partitions come and go
    /// through the block cache.
    /// </summary>
    public long FilterMemoryUsage { get; }

    /// <summary>
    /// Bytes this reader holds outside the block cache (RocksDB's TableReader::ApproximateMemoryUsage,
    /// summed by <c>rocksdb.estimate-table-readers-mem</c>): the index and top-level filter index
    /// blocks and the filter when the reader keeps them, partitions it owns rather than pins in the
    /// cache, and its fragmented range tombstones. Blocks in the cache, pinned or not, are the
    /// cache's usage and are not counted here. Properties and the reader object itself are not counted.
    /// </summary>
    public long ApproximateMemoryUsage
    {
        get
        {
            long bytes = (_indexBlock?.AllocatedBytes ?? 0) + (_filterIndexBlock?.AllocatedBytes ?? 0)
                + (_indexBlock?.RestartPrefixBytes ?? 0);
            if (_filter != null)
            {
                bytes += FilterMemoryUsage;
            }
            bytes += (_pinnedIndexPartitions?.OwnedBytes ?? 0) + (_pinnedFilterPartitions?.OwnedBytes ?? 0);
            bytes += RangeTombstones?.ApproximateMemoryUsage ?? 0;
            return bytes;
        }
    }

    /// <summary>True when a filter block was loaded (the metaindex names the configured policy).</summary>
    public bool HasFilter => _hasFilter;


    /// <summary>
    /// True when the filter holds prefixes under the family's current extractor (the table's
    /// <c>rocksdb.prefix.extractor.name</c> names it), so Seek and Get may consult it by prefix.
    /// </summary>
    public bool HasPrefixFilter => _hasFilter && _prefixExtractor != null;

    /// <summary>True when the table's filter holds whole user keys (not only prefixes): <see cref="KeyMayMatch"/> then checks the key itself and records no ticker.</summary>
    public bool HasWholeKeyFilter => _hasFilter && _filterHasWholeKeys;

    /// <summary>False only when the filter proves <paramref name="userKey"/> is absent.</summary>
    public bool KeyMayMatch(ReadOnlySpan<byte> userKey, bool fillCache = true)
    {
        if (!_hasFilter || (!_filterHasWholeKeys && _prefixExtractor == null))
        {
            return true;
        }
        if (_partitionedFilter)
        {
            int length = userKey.Length + InternalKeys.TrailerSize;
            byte[]? rented = length > StackKeyLimit ? ArrayPool<byte>.Shared.Rent(length) : null;
            Span<byte> lookup = rented != null ? rented.AsSpan(0, length) : stackalloc byte[length];
            InternalKeys.Encode(lookup, userKey, InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek);
            try
            {
                return FilterMayMatch(userKey, lookup, fillCache);
            }
            finally
            {
                if (rented != null)
                {
                    ArrayPool<byte>.Shared.Return(rented);
                }
            }
        }
        return FilterMayMatch(userKey, default, fillCache);
    }

    /// <summary>
    /// RocksDB's BlockBasedTable::PrefixRangeMayMatch for an iterator's Seek or SeekForPrev to
    /// <paramref name="internalTarget"/>: false only when this table holds prefixes of the current
    /// extractor, the target's user key is in its domain, and the filter (the partition the target
    /// falls in, when partitioned) proves the prefix absent. Counts the
    /// <see cref="Ticker.BloomFilterPrefixChecked"/> / <see cref="Ticker.BloomFilterPrefixUseful"/> tickers.
    /// </summary>
    public bool PrefixMayMatch(ReadOnlySpan<byte> internalTarget, bool fillCache = true)
    {
        if (!_hasFilter || _prefixExtractor == null)
        {
            return true;
        }
        return PrefixFilterMayMatch(_prefixExtractor, InternalKeys.UserKey(internalTarget), internalTarget, fillCache);
    }

    /// <summary>
    /// RocksDB's FullFilterKeyMayMatch: the whole key when the filter holds whole keys, else the
    /// key's prefix when the filter holds prefixes and the key is in the domain, else true.
    /// <paramref name="lookupKey"/> (an internal key) picks the partition of a partitioned filter.
    /// </summary>
    private bool FilterMayMatch(ReadOnlySpan<byte> userKey, ReadOnlySpan<byte> lookupKey, bool fillCache)
    {
        if (_filterHasWholeKeys)
        {
            return _partitionedFilter ? PartitionedKeyMayMatch(userKey, lookupKey, fillCache) : FullKeyMayMatch(userKey, fillCache);
        }
        return _prefixExtractor == null || PrefixFilterMayMatch(_prefixExtractor, userKey, lookupKey, fillCache);
    }

    /// <summary>The prefix check of a filter holding <paramref name="extractor"/>'s prefixes; keys out of its domain are not filtered.</summary>
    private bool PrefixFilterMayMatch(KvPrefixExtractor extractor, ReadOnlySpan<byte> userKey, ReadOnlySpan<byte> lookupKey, bool fillCache)
    {
        if (!extractor.InDomain(userKey))
        {
            return true;
        }
        ReadOnlySpan<byte> prefix = extractor.Transform(userKey);
        bool mayMatch = _partitionedFilter ? PartitionedKeyMayMatch(prefix, lookupKey, fillCache) : FullKeyMayMatch(prefix, fillCache);
        KvStatistics? stats = _options.Statistics;
        stats?.Record(Ticker.BloomFilterPrefixChecked);
        if (!mayMatch)
        {
            stats?.Record(Ticker.BloomFilterPrefixUseful);
        }
        return mayMatch;
    }

    private bool FullKeyMayMatch(ReadOnlySpan<byte> userKey, bool fillCache) => MayMatch(AcquireFullFilter(fillCache), userKey);

    /// <summary>Asks the filter <paramref name="lease"/> holds about <paramref name="userKey"/>, then releases the lease.</summary>
    private static bool MayMatch(FilterLease lease, ReadOnlySpan<byte> userKey)
    {
        try
        {
            return lease.Reader.MayMatch(userKey);
        }
        finally
        {
            lease.Release();
        }
    }

    /// <summary>The full filter (the reader's own, pinned, or through the block cache); the caller releases the lease.</summary>
    private FilterLease AcquireFullFilter(bool fillCache)
    {
        if (_filter != null)
        {
            return FilterLease.Borrowed(_filter);
        }
        if (_pinnedFilter is LruHandle pinned)
        {
            return FilterLease.Borrowed(((FilterCacheValue)pinned.Value).Reader);
        }
        return AcquireCachedFilter(_filterHandle, fillCache, demotable: true);
    }

    /// <summary>
    /// Finds the newest entry for <paramref name="userKey"/> with sequence &lt;= <paramref name="sequence"/>.
    /// Returns false when there is none. For a Value entry the value is appended to
    /// <paramref name="valueOut"/>; Merge (the caller collects the operands), Deletion and
    /// SingleDeletion append nothing.
    /// </summary>
    public bool TryGet(ReadOnlySpan<byte> userKey, ulong sequence, IBufferWriter<byte> valueOut, out ValueType type, bool verifyChecksums, bool fillCache = true) =>
        TryGet(userKey, sequence, valueOut, out type, verifyChecksums, fillCache, coveringSequence: 0);

    /// <summary>
    /// <see cref="TryGet(ReadOnlySpan{byte}, ulong, IBufferWriter{byte}, out ValueType, bool, bool)"/>
    /// under a range tombstone at <paramref name="coveringSequence"/> (0: none): a found entry with
    /// a smaller sequence is reported as a Deletion and nothing is appended.
    /// </summary>
    public bool TryGet(ReadOnlySpan<byte> userKey, ulong sequence, IBufferWriter<byte> valueOut, out ValueType type, bool verifyChecksums, bool fillCache, ulong coveringSequence) =>
        TryGet(userKey, sequence, valueOut, out type, verifyChecksums, fillCache, coveringSequence, out _);

    /// <summary>
    /// <see cref="TryGet(ReadOnlySpan{byte}, ulong, IBufferWriter{byte}, out ValueType, bool, bool, ulong)"/>
    /// that also tells whether it read a data block from the file (a block-cache miss, or no
    /// cache): <paramref name="dataBlockReadFromFile"/>, for the caller's GetStats.
    /// </summary>
    public bool TryGet(ReadOnlySpan<byte> userKey, ulong sequence, IBufferWriter<byte> valueOut, out ValueType type, bool verifyChecksums, bool fillCache,
        ulong coveringSequence, out bool dataBlockReadFromFile)
    {
        dataBlockReadFromFile = false;
        ArgumentNullException.ThrowIfNull(valueOut);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(sequence, InternalKeys.MaxSequenceNumber);
        type = default;
        if (sequence < GlobalSequenceNumber)
        {
            return false; // every entry of an ingested file is newer than the reader's sequence
        }
        KvStatistics? stats = _options.Statistics;
        int seekLength = userKey.Length + InternalKeys.TrailerSize;
        byte[]? rented = seekLength > StackKeyLimit ? ArrayPool<byte>.Shared.Rent(seekLength) : null;
        Span<byte> seekKey = rented != null ? rented.AsSpan(0, seekLength) : stackalloc byte[seekLength];
        InternalKeys.Encode(seekKey, userKey, sequence, ValueType.ValueTypeForSeek);
        try
        {
            bool mayMatch = !_hasFilter || FilterMayMatch(userKey, seekKey, fillCache);
            if (!mayMatch)
            {
                stats?.Record(Ticker.BloomFilterUseful);
                return false;
            }
            if (_hasFilter && _filterHasWholeKeys)
            {
                stats?.Record(Ticker.BloomFilterFullPositive);
            }
            int fileReads = 0;
            bool found = Seek(userKey, seekKey, valueOut, out type, verifyChecksums, fillCache, coveringSequence, ref fileReads);
            dataBlockReadFromFile = fileReads > 0;
            return found;
        }
        finally
        {
            if (rented != null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
    }

    /// <summary>
    /// TryGet past the filter: the index (and its partitions) to the data block holding the key;
    /// an entry older than <paramref name="coveringSequence"/> is deleted by a range tombstone.
    /// <paramref name="fileReads"/> counts the data blocks read from the file.
    /// </summary>
    private bool Seek(ReadOnlySpan<byte> userKey, ReadOnlySpan<byte> seekKey, IBufferWriter<byte> valueOut, out ValueType type, bool verifyChecksums, bool fillCache,
        ulong coveringSequence, ref int fileReads)
    {
        type = default;
        BlockLease indexLease = AcquireIndex(fillCache);
        var index = new IndexCursor(this, indexLease.Block, fillCache);
        try
        {
            for (index.Seek(seekKey); index.Valid; index.Next())
            {
                BlockLease lease = ReadDataBlock(index.Handle, verifyChecksums, fillCache, ref fileReads);
                var data = new BlockCursor(lease.Block, BlockKeyFormat.InternalKey);
                try
                {
                    data.SeekForGet(seekKey); // the block's hash index, when it has one
                    if (!data.Valid)
                    {
                        continue; // the target sorts after this block's last key; try the next block
                    }
                    ReadOnlySpan<byte> found = data.Key;
                    if (!InternalKeys.UserKey(found).SequenceEqual(userKey))
                    {
                        return false;
                    }
                    type = ClassifyEntry(found, coveringSequence);
                    if (type == ValueType.Value)
                    {
                        BufferWriterCopy.WriteWhole(valueOut, data.Value);
                    }
                    return true;
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
        }
    }

    /// <summary>
    /// The type of <paramref name="found"/>, the newest visible entry of the looked-up key (point
    /// lookups: Get and MultiGet): Deletion when a range tombstone at <paramref name="coveringSequence"/>
    /// deletes it; Value, Merge (the caller collects the operands, MergeLookup), Deletion or
    /// SingleDeletion otherwise; any other type is corruption.
    /// </summary>
    private ValueType ClassifyEntry(ReadOnlySpan<byte> found, ulong coveringSequence)
    {
        if (_hasFilter)
        {
            _options.Statistics?.Record(Ticker.BloomFilterFullTruePositive);
        }
        ValueType type = InternalKeys.Type(found);
        if ((GlobalSequenceNumber != 0 ? GlobalSequenceNumber : InternalKeys.Sequence(found)) < coveringSequence)
        {
            return ValueType.Deletion; // deleted by a range tombstone
        }
        return type switch
        {
            ValueType.Value or ValueType.Merge or ValueType.Deletion or ValueType.SingleDeletion => type,
            _ => throw new KvCorruptionException($"{FileName}: unexpected value type 0x{(byte)type:x2} in a data block."),
        };
    }

    /// <summary>
    /// A two-level iterator over every point entry; with <paramref name="prefixFilter"/>, seeks
    /// consult the prefix filter (see <see cref="TableIterator.Rent"/>); a positive
    /// <paramref name="readaheadSize"/> reads that many bytes ahead from the first block read on (a
    /// compaction's input), 0 reads ahead automatically once reads are sequential; <paramref name="reads"/>
    /// adds asynchronous prefetch or a scan's deferred reads.
    /// </summary>
    public InternalIterator NewIterator(bool verifyChecksums, bool fillCache = true, bool prefixFilter = false, int readaheadSize = 0, IteratorReads? reads = null)
    {
        InternalIterator it = TableIterator.Rent(this, verifyChecksums, fillCache, prefixFilter, readaheadSize, reads);
        return GlobalSequenceNumber == 0 ? it : new GlobalSequenceIterator(it, GlobalSequenceNumber);
    }

    /// <summary>A cursor over an index block (or top-level index, or index partition); the caller disposes it.</summary>
    internal BlockCursor NewIndexCursor(Block index) => new(index, _indexKeyFormat, _indexValueFormat, _indexHasFirstKey);

    /// <summary>True when the index is partitioned (index partitions under the top-level index <see cref="AcquireIndex"/> returns).</summary>
    internal bool IsTwoLevel => _twoLevel;

    public void Dispose()
    {
        _disposed = true;
        bool wasOpen = Interlocked.Exchange(ref _fileUsers, -1) >= 0;
        if (wasOpen)
        {
            _file!.Dispose();
            _file = null;
        }
        _limiter?.Unregister(this, wasOpen);
        ReleaseMetadata();
    }

    /// <summary>Frees or unpins every index and filter block the reader holds (Dispose, or a failed open).</summary>
    private void ReleaseMetadata()
    {
        (_filter as IDisposable)?.Dispose();
        _indexBlock?.Dispose();
        _filterIndexBlock?.Dispose();
        _pinnedIndexPartitions?.Dispose();
        _pinnedFilterPartitions?.Dispose();
        if (_pinnedIndex is LruHandle index)
        {
            _options.BlockCache!.Release(index);
        }
        if (_pinnedFilter is LruHandle filter)
        {
            _options.BlockCache!.Release(filter);
        }
    }

    private Block ReadMetaBlock(BlockHandle handle, string kind)
    {
        byte[] data = ReadBlockContents(handle, verifyChecksum: true, kind);
        return new Block(data, data.Length, pooled: false, isDataBlock: false, FileName, kind, handle.Offset);
    }

    /// <summary>Dispose has run: the index and filter the reader held are freed.</summary>
    internal bool IsDisposed => _disposed;

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

    /// <summary>
    /// A positional read through the file, reopening it when the limiter closed it; inside an
    /// asynchronous lookup's attempt (<see cref="DeferredBlockReads.Current"/>) the bytes come from
    /// what the operation fetched, or the read is deferred (see <see cref="DeferredBlockReads"/>).
    /// </summary>
    private int ReadFile(long offset, Span<byte> buffer)
    {
        if (_deferrable && DeferredBlockReads.Current is { } deferred)
        {
            return deferred.ServeOrDefer(this, offset, buffer);
        }
        return ReadFileNow(offset, buffer);
    }

    /// <summary><see cref="ReadFile"/> with the read always done here and now.</summary>
    private int ReadFileNow(long offset, Span<byte> buffer)
    {
        IRandomAccessFile file = AcquireFile();
        try
        {
            return file.Read(offset, buffer);
        }
        finally
        {
            ReleaseFile();
        }
    }

    /// <summary>
    /// The open file, reopened when the limiter closed it, counted as in use (the limiter does not
    /// close it) until the matching <see cref="ReleaseFile"/>.
    /// </summary>
    private IRandomAccessFile AcquireFile()
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
        Volatile.Write(ref _lastFileUse, Environment.TickCount64);
        return _file!;
    }

    /// <summary>Ends a use of the file taken by <see cref="AcquireFile"/>.</summary>
    private void ReleaseFile() => Interlocked.Decrement(ref _fileUsers);

    /// <summary>Reads, verifies and decompresses one block into a native buffer from <see cref="TableOptions.BlockAllocator"/>.</summary>
    private Block ReadNativeBlock(BlockHandle handle, bool verifyChecksum, CacheEntryRole role, string? kind = null)
    {
        kind ??= role == CacheEntryRole.Data ? "data" : "index";
        if (handle.Size >= DirectReadMinBytes && TryReadUncompressedInPlace(handle, verifyChecksum, role, kind) is { } direct)
        {
            return direct;
        }
        using BlockScratch raw = ReadRawBlock(handle, verifyChecksum, kind, out _);
        return DecodeNativeBlock(raw.Span, handle, role, kind);
    }

    /// <summary>Decompresses one block (payload and trailer, checksum already verified) into a native buffer.</summary>
    private Block DecodeNativeBlock(ReadOnlySpan<byte> raw, BlockHandle handle, CacheEntryRole role, string kind)
    {
        int size = raw.Length - TableFormat.BlockTrailerSize;
        NativeBuffer output = default;
        try
        {
            var type = (CompressionType)raw[size];
            if (type == CompressionType.None)
            {
                output = _options.BlockAllocator.Allocate(size, use: NativeUse.TableBlock);
                raw[..size].CopyTo(output.Span);
            }
            else
            {
                int uncompressed = BlockCompression.ReadUncompressedLength(type, raw[..size], _options.MaxUncompressedBlockSize, FileName, handle.Offset, out int header);
                output = _options.BlockAllocator.Allocate(uncompressed, use: NativeUse.TableBlock);
                BlockCompression.Decompress(type, raw[header..size], output.Span, FileName, handle.Offset);
            }
        }
        catch
        {
            output.Dispose();
            throw;
        }
        return Block.RentNative(output, role, FileName, kind, handle.Offset);
    }

    /// <summary>Checks a block's stored checksum (payload and trailer in <paramref name="raw"/>).</summary>
    private void VerifyBlockChecksum(ReadOnlySpan<byte> raw, BlockHandle handle, string kind)
    {
        int size = raw.Length - TableFormat.BlockTrailerSize;
        VerifyBlockChecksum(raw[..size], raw[size..], handle, kind);
    }

    /// <summary>Checks a block's stored checksum: <paramref name="payload"/> and its 5-byte <paramref name="trailer"/> apart.</summary>
    private void VerifyBlockChecksum(ReadOnlySpan<byte> payload, ReadOnlySpan<byte> trailer, BlockHandle handle, string kind)
    {
        byte typeByte = trailer[0];
        uint stored = Coding.DecodeFixed32(trailer[1..]);
        uint actual = BlockChecksum.Compute(Footer.ChecksumType, payload, typeByte);
        if (stored != actual)
        {
            throw new KvCorruptionException(
                $"{FileName}: block checksum mismatch in {kind} block {handle}: stored 0x{stored:x8}, computed 0x{actual:x8}.");
        }
    }

    /// <summary>Throws <see cref="KvCorruptionException"/> unless the block and its trailer lie within the table data.</summary>
    private void CheckBlockBounds(BlockHandle handle, string kind)
    {
        ulong limit = _fileSize - TableFormat.FooterSize;
        if (handle.Size > limit || handle.Offset > limit - handle.Size || limit - handle.Size - handle.Offset < TableFormat.BlockTrailerSize)
        {
            throw new KvCorruptionException($"{FileName}: {kind} block {handle} extends past the end of the table data (file size {_fileSize}).");
        }
    }

    /// <summary>
    /// A data block read from the file, through <paramref name="readahead"/> when there is one (not a
    /// null reference): from its buffer when it holds the block, else with a readahead read when the
    /// iterator reads sequentially, else alone. Verified and decompressed into a native buffer.
    /// </summary>
    private Block ReadNativeDataBlock(BlockHandle handle, bool verifyChecksum, ref Readahead readahead)
    {
        if (Unsafe.IsNullRef(ref readahead))
        {
            return ReadNativeBlock(handle, verifyChecksum, CacheEntryRole.Data);
        }
        CheckBlockBounds(handle, "data");
        long offset = (long)handle.Offset;
        int total = (int)handle.Size + TableFormat.BlockTrailerSize;
        if (!readahead.TryGet(offset, total, out ReadOnlySpan<byte> raw) && !(readahead.Prefetcher is { } prefetcher && prefetcher.TryGet(this, offset, total, out raw)) &&
            !TryJoinPrefetched(ref readahead, offset, total, out raw))
        {
            int ahead = readahead.Plan(total, (long)_fileSize - offset);
            if (ahead == 0)
            {
                return ReadNativeBlock(handle, verifyChecksum, CacheEntryRole.Data);
            }
            Span<byte> buffer = readahead.Prepare(offset, ahead, _alignment, out long readOffset);
            readahead.Filled(ReadFile(readOffset, buffer));
            if (!readahead.TryGet(offset, total, out raw))
            {
                throw new KvCorruptionException($"{FileName}: truncated while reading data block {handle}.");
            }
        }
        PrefetchAhead(ref readahead, offset, total);
        return DecodeRawDataBlock(raw, handle, verifyChecksum);
    }

    /// <summary>A data block's bytes and trailer, read from the file: counted, verified and decompressed into a native buffer.</summary>
    private Block DecodeRawDataBlock(ReadOnlySpan<byte> raw, BlockHandle handle, bool verifyChecksum)
    {
        RecordBlockRead(raw.Length);
        if (verifyChecksum)
        {
            VerifyBlockChecksum(raw, handle, "data");
        }
        return DecodeNativeBlock(raw, handle, CacheEntryRole.Data, "data");
    }

    /// <summary>Counts one block of <paramref name="total"/> bytes (trailer included) read from the file.</summary>
    private void RecordBlockRead(int total)
    {
        if (_options.Statistics is { } stats)
        {
            stats.Record(Ticker.BlockReads);
            stats.Record(Ticker.BlockReadBytes, total);
        }
    }

    /// <summary>Reads one block and its trailer into scratch memory and verifies the checksum; the caller disposes the scratch.</summary>
    private BlockScratch ReadRawBlock(BlockHandle handle, bool verifyChecksum, string kind, out int size)
    {
        CheckBlockBounds(handle, kind);
        size = (int)handle.Size;
        int total = size + TableFormat.BlockTrailerSize;
        RecordBlockRead(total);
        // A direct-I/O file reads an aligned range into aligned memory in place (no bounce copy).
        long readOffset = (long)handle.Offset;
        BlockScratch raw = _alignment > 1 ? BlockScratch.RentAligned(readOffset, total, out readOffset) : BlockScratch.Rent(total);
        try
        {
            if (ReadFile(readOffset, raw.ReadSpan) < raw.Skip + total)
            {
                throw new KvCorruptionException($"{FileName}: truncated while reading {kind} block {handle}.");
            }
            if (verifyChecksum)
            {
                VerifyBlockChecksum(raw.Span, handle, kind);
            }
            return raw;
        }
        catch
        {
            raw.Dispose();
            throw;
        }
    }

    /// <summary>Reads, verifies and decompresses one block into a new array of exactly its length (small metadata blocks).</summary>
    private byte[] ReadBlockContents(BlockHandle handle, bool verifyChecksum, string kind)
    {
        using BlockScratch contents = ReadBlockContentsScratch(handle, verifyChecksum, kind);
        return contents.Span.ToArray();
    }

    /// <summary>Reads, verifies and decompresses one block into scratch memory of exactly its length; the caller disposes it.</summary>
    private BlockScratch ReadBlockContentsScratch(BlockHandle handle, bool verifyChecksum, string kind)
    {
        BlockScratch raw = ReadRawBlock(handle, verifyChecksum, kind, out int size);
        bool disposeRaw = true;
        try
        {
            ReadOnlySpan<byte> bytes = raw.Span;
            var type = (CompressionType)bytes[size];
            BlockScratch output;
            if (type == CompressionType.None)
            {
                raw.Shrink(size); // the payload without its trailer
                disposeRaw = false;
                return raw;
            }
            string source = FileName;
            int uncompressed = BlockCompression.ReadUncompressedLength(type, bytes[..size], _options.MaxUncompressedBlockSize, source, handle.Offset, out int header);
            output = BlockScratch.Rent(uncompressed);
            try
            {
                BlockCompression.Decompress(type, bytes[header..size], output.Span, source, handle.Offset);
            }
            catch
            {
                output.Dispose();
                throw;
            }
            return output;
        }
        finally
        {
            if (disposeRaw)
            {
                raw.Dispose();
            }
        }
    }
}
