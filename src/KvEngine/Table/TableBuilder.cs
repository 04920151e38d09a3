using KvEngine.Compression;
using KvEngine.Format;
using KvEngine.Storage;
using KvEngine.Util;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Table;

// Table     := data_block* filter index range_del_block? properties_block metaindex_block footer
// filter    := filter_block?                                    (full filter)
//            | filter_partition* top_level_filter_index         (partitioned; see PartitionedFilterBlockBuilder)
// index     := index_block                                      (index_type 0)
//            | index_partition+ top_level_index                 (index_type 2; see PartitionedIndexBuilder)
// each block is followed by its trailer:
//   trailer := compression_type: byte  checksum: fixed32       (see BlockChecksum)
// data_block      := Block of internal key -> value, restart interval BlockRestartInterval
// filter_block    := the filter policy's bytes (never compressed)
// index_block     := see ShortenedIndexBuilder (compressed like data when EnableIndexCompression)
// range_del_block := Block of range-tombstone start internal key -> end user key, restart interval 1
// properties      := see TablePropertiesCodec (never compressed)
// metaindex_block := Block of meta block name -> BlockHandle, sorted by name, restart interval 1
// footer          := see Footer

/// <summary>
/// Writes one RocksDB block-based table (format_version 5) to an <see cref="IWritableFile"/>:
/// entries in strictly increasing internal-key order, data blocks cut by size, then the meta
/// blocks, index and footer on <see cref="Finish"/>. The file is neither synced nor closed here.
/// Not thread-safe; one writer. After Finish or Abandon only the read-only members may be used.
/// </summary>
internal sealed partial class TableBuilder : ITableBlockWriter, IDisposable
{
    private readonly TableOptions _options;
    private readonly IWritableFile _file;
    private readonly TableBuildContext _context;
    private readonly BlockBuilder _dataBlock;
    private readonly BlockBuilder _rangeDelBlock = new(1);
    private readonly IIndexBuilder _indexBuilder;
    private readonly IFilterBlockBuilder? _filterBuilder;
    private readonly ByteBuffer _lastKey = new(64);
    private readonly ByteBuffer _lastRangeDelKey = new(64);
    private readonly ByteBuffer _smallestKey = new(64);
    private readonly ByteBuffer _compressed = new(4096, spillToNative: true); // an index or filter block compressed: up to megabytes, once per table
    private readonly int _deviationLimit;
    private readonly TableProperties _props = new();
    private BlockHandle _pendingHandle;
    private bool _pendingIndexEntry;
    private ulong _offset;
    private bool _closed;

    public TableBuilder(TableOptions options, IWritableFile file, TableBuildContext? context = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(file);
        options.Validate();
        if (file.Size != 0)
        {
            throw new ArgumentException("A table must start at the beginning of an empty file.", nameof(file));
        }
        BlockCompression.EnsureWritable(options.Compression);
        _options = options;
        _file = file;
        _context = context ?? TableBuildContext.Default;
        _dataBlock = new BlockBuilder(options.BlockRestartInterval,
            hashUtilRatio: options.DataBlockIndexType == KvDataBlockIndexType.BinaryAndHash ? options.DataBlockHashTableUtilRatio : 0);
        if (options.IndexType == IndexType.TwoLevelIndexSearch)
        {
            var partitioned = new PartitionedIndexBuilder(options.IndexBlockRestartInterval, options.IndexShortening, options.MetadataBlockSize, options.BlockSizeDeviation);
            _indexBuilder = partitioned;
            if (options.FilterPolicy != null && options.PartitionFilters)
            {
                _filterBuilder = new PartitionedFilterBlockBuilder(options.FilterPolicy, options.WholeKeyFiltering, options.OptimizeFiltersForMemory, partitioned,
                    options.IndexBlockRestartInterval, options.MetadataBlockSize, options.BlockSizeDeviation, options.DecouplePartitionedFilters, options.PrefixExtractor);
            }
        }
        else
        {
            _indexBuilder = new ShortenedIndexBuilder(options.IndexBlockRestartInterval, options.IndexShortening);
        }
        if (options.FilterPolicy != null && _filterBuilder == null)
        {
            _filterBuilder = new FullFilterBlockBuilder(options.FilterPolicy, options.WholeKeyFiltering, options.OptimizeFiltersForMemory, options.PrefixExtractor);
        }
        _deviationLimit = (int)((((long)options.BlockSize * (100 - options.BlockSizeDeviation)) + 99) / 100);
    }

    /// <summary>Point entries added (range tombstones not included).</summary>
    public long NumEntries { get; private set; }

    /// <summary>Bytes written so far; the final file size after <see cref="Finish"/>.</summary>
    public long FileSize => (long)_offset;

    /// <summary>Smallest point entry's internal key (empty when none).</summary>
    public ReadOnlySpan<byte> SmallestKey => _smallestKey.WrittenSpan;

    /// <summary>Largest point entry's internal key (empty when none).</summary>
    public ReadOnlySpan<byte> LargestKey => _lastKey.WrittenSpan;

    /// <summary>The properties as written (complete after <see cref="Finish"/>).</summary>
    public TableProperties Properties => _props;

    /// <summary>
    /// Before the first entry: the table will hold at most <paramref name="userKeys"/> distinct user
    /// keys (a flush knows its memtable's count), so a whole-table filter can be sized up front and
    /// need not keep a hash per key until <see cref="Finish"/>.
    /// </summary>
    public void ExpectKeys(long userKeys)
    {
        EnsureOpen();
        if (NumEntries == 0)
        {
            _filterBuilder?.ExpectKeys(userKeys);
        }
    }

    /// <summary>Adds a point entry; keys must strictly increase in internal-key order.</summary>
    public void Add(ReadOnlySpan<byte> internalKey, ReadOnlySpan<byte> value)
    {
        EnsureOpen();
        if (!InternalKeys.IsValid(internalKey) || InternalKeys.Type(internalKey) == ValueType.RangeDeletion)
        {
            throw new ArgumentException("Not a point entry's internal key (use AddRangeTombstone for range deletions).", nameof(internalKey));
        }
        if (NumEntries > 0 && InternalKeyComparer.Compare(internalKey, _lastKey.WrittenSpan) <= 0)
        {
            throw new ArgumentException("Keys must be added in strictly increasing internal-key order.", nameof(internalKey));
        }

        bool ownBlock = IsLargeValue(value.Length);
        if (!_dataBlock.IsEmpty && (ownBlock || ShouldFlush(internalKey.Length, value.Length)))
        {
            FlushDataBlock();
        }
        if (_pendingIndexEntry)
        {
            _indexBuilder.AddIndexEntry(_lastKey.WrittenSpan, true, internalKey, _pendingHandle);
            _pendingIndexEntry = false;
        }
        _filterBuilder?.Add(InternalKeys.UserKey(internalKey));
        _indexBuilder.OnKeyAdded(internalKey);

        if (NumEntries == 0)
        {
            _smallestKey.Append(internalKey);
        }
        _lastKey.Clear();
        _lastKey.Append(internalKey);
        if (ownBlock)
        {
            _pendingHandle = WriteLargeEntryBlock(internalKey, value);
            _pendingIndexEntry = true;
            _props.DataSize = _offset;
            _props.NumDataBlocks++;
        }
        else
        {
            _dataBlock.Add(internalKey, value);
        }
        NumEntries++;
        CountEntry(InternalKeys.Type(internalKey), internalKey.Length, value.Length);
    }

    /// <summary>
    /// Adds a range tombstone [start user key, <paramref name="endUserKey"/>) at the sequence in
    /// <paramref name="startInternalKey"/> (whose type must be RangeDeletion). Tombstones must come
    /// in strictly increasing order of their start internal keys.
    /// </summary>
    public void AddRangeTombstone(ReadOnlySpan<byte> startInternalKey, ReadOnlySpan<byte> endUserKey)
    {
        EnsureOpen();
        if (startInternalKey.Length < InternalKeys.TrailerSize || InternalKeys.Type(startInternalKey) != ValueType.RangeDeletion)
        {
            throw new ArgumentException("A range tombstone's start must be an internal key of type RangeDeletion.", nameof(startInternalKey));
        }
        if (!_rangeDelBlock.IsEmpty && InternalKeyComparer.Compare(startInternalKey, _lastRangeDelKey.WrittenSpan) <= 0)
        {
            throw new ArgumentException("Range tombstones must be added in strictly increasing start-key order.", nameof(startInternalKey));
        }
        _lastRangeDelKey.Clear();
        _lastRangeDelKey.Append(startInternalKey);
        _rangeDelBlock.Add(startInternalKey, endUserKey);
        CountEntry(ValueType.RangeDeletion, startInternalKey.Length, endUserKey.Length);
    }

    /// <summary>Writes the last data block, the meta blocks, the index and the footer.</summary>
    public void Finish()
    {
        EnsureOpen();
        FlushDataBlock();
        if (_pendingIndexEntry)
        {
            _indexBuilder.AddIndexEntry(_lastKey.WrittenSpan, false, default, _pendingHandle);
            _pendingIndexEntry = false;
        }
        _closed = true;

        var metaIndex = new SortedDictionary<string, BlockHandle>(StringComparer.Ordinal);
        if (_filterBuilder is { IsEmpty: false })
        {
            _props.NumFilterEntries = (ulong)_filterBuilder.EntriesAdded;
            metaIndex[_filterBuilder.MetaIndexKey] = _filterBuilder.Finish(this, out long filterSize);
            _props.FilterSize = (ulong)filterSize;
        }

        BlockHandle indexHandle = _indexBuilder.Finish(this, _options.EnableIndexCompression ? _options.Compression : CompressionType.None);

        if (!_rangeDelBlock.IsEmpty)
        {
            metaIndex[TableFormat.RangeDelBlockName] = WriteBlock(_rangeDelBlock.Finish(), CompressionType.None);
        }

        FillProperties();
        using (var propsBlock = new BlockBuilder(TablePropertiesCodec.RestartInterval))
        {
            TablePropertiesCodec.Encode(_props, propsBlock);
            metaIndex[TableFormat.PropertiesBlockName] = WriteBlock(propsBlock.Finish(), CompressionType.None);
        }

        BlockHandle metaIndexHandle;
        using (var metaBlock = new BlockBuilder(1))
        {
            Span<byte> handle = stackalloc byte[BlockHandle.MaxEncodedLength];
            foreach (KeyValuePair<string, BlockHandle> kv in metaIndex)
            {
                int n = kv.Value.EncodeTo(handle);
                metaBlock.Add(System.Text.Encoding.UTF8.GetBytes(kv.Key), handle[..n]);
            }
            metaIndexHandle = WriteBlock(metaBlock.Finish(), CompressionType.None);
        }

        Span<byte> footer = stackalloc byte[TableFormat.FooterSize];
        new Footer(_options.Checksum, metaIndexHandle, indexHandle, (uint)_options.FormatVersion).EncodeTo(footer);
        _file.Append(footer);
        _offset += (ulong)footer.Length;
    }

    /// <summary>Stops building; whatever was written stays in the file, which the caller deletes.</summary>
    public void Abandon() => _closed = true;

    public void Dispose()
    {
        _closed = true;
        _dataBlock.Dispose();
        _rangeDelBlock.Dispose();
        _indexBuilder.Dispose();
        _filterBuilder?.Dispose();
        _lastKey.Dispose();
        _lastRangeDelKey.Dispose();
        _smallestKey.Dispose();
        _compressed.Dispose();
    }

    /// <summary>RocksDB's FlushBlockBySizePolicy.</summary>
    private bool ShouldFlush(int keyLength, int valueLength)
    {
        int current = _dataBlock.CurrentSizeEstimate;
        if (current >= _options.BlockSize)
        {
            return true;
        }
        return _options.BlockSizeDeviation > 0
            && current > _deviationLimit
            && _dataBlock.EstimateSizeAfterKV(keyLength, valueLength) > _options.BlockSize;
    }

    private void FlushDataBlock()
    {
        if (_dataBlock.IsEmpty)
        {
            return;
        }
        _pendingHandle = WriteBlock(_dataBlock.Finish(), _options.Compression);
        _dataBlock.Reset();
        if (_compressed.Capacity > BlockBuilder.RetainedCapacity)
        {
            _compressed.ReleaseLarge(); // a large block's compressed copy: free it now, not at the end of the table
        }
        _pendingIndexEntry = true;
        _props.DataSize = _offset;
        _props.NumDataBlocks++;
    }

    BlockHandle ITableBlockWriter.WriteBlock(ReadOnlySpan<byte> raw, CompressionType compression) => WriteBlock(raw, compression);

    private BlockHandle WriteBlock(ReadOnlySpan<byte> raw, CompressionType compression)
    {
        _compressed.Clear();
        ReadOnlySpan<byte> payload = raw;
        CompressionType type = CompressionType.None;
        if (compression != CompressionType.None && BlockCompression.TryCompress(compression, _options.CompressionLevel, raw, _compressed))
        {
            payload = _compressed.WrittenSpan;
            type = compression;
        }
        Span<byte> trailer = stackalloc byte[TableFormat.BlockTrailerSize];
        trailer[0] = (byte)type;
        Coding.EncodeFixed32(trailer[1..], BlockChecksum.Compute(_options.Checksum, payload, (byte)type));
        var handle = new BlockHandle(_offset, (ulong)payload.Length);
        _file.Append(payload);
        _file.Append(trailer);
        _offset += (ulong)payload.Length + TableFormat.BlockTrailerSize;
        return handle;
    }

    private void CountEntry(ValueType type, int keyLength, int valueLength)
    {
        _props.NumEntries++;
        _props.RawKeySize += (ulong)keyLength;
        _props.RawValueSize += (ulong)valueLength;
        switch (type)
        {
            case ValueType.Deletion:
            case ValueType.SingleDeletion:
                _props.NumDeletions++;
                break;
            case ValueType.RangeDeletion:
                _props.NumDeletions++;
                _props.NumRangeDeletions++;
                break;
            case ValueType.Merge:
                _props.NumMergeOperands++;
                break;
        }
    }

    private void FillProperties()
    {
        TableProperties p = _props;
        p.IndexSize = (ulong)_indexBuilder.IndexSize + TableFormat.BlockTrailerSize;
        p.IndexKeyIsUserKey = _indexBuilder.IndexKeyIsUserKey ? 1UL : 0UL;
        p.IndexValueIsDeltaEncoded = _indexBuilder.IndexValueIsDeltaEncoded ? 1UL : 0UL;
        p.IndexType = _indexBuilder.IndexType;
        p.IndexPartitions = (ulong)_indexBuilder.NumPartitions;
        p.TopLevelIndexSize = (ulong)_indexBuilder.TopLevelIndexSize;
        p.FormatVersion = 0; // RocksDB's block-based tables record 0 here; the footer carries the version.
        p.ColumnFamilyId = _context.ColumnFamilyId;
        p.ColumnFamilyName = _context.ColumnFamilyName;
        p.CreationTime = _context.CreationTime;
        p.OldestKeyTime = _context.OldestKeyTime;
        p.FileCreationTime = _context.FileCreationTime != 0 || _context.OmitFileCreationTime
            ? _context.FileCreationTime
            : (ulong)DateTimeOffset.UtcNow.ToUnixTimeSeconds();
        if (_context.UserProperties != null)
        {
            foreach (KeyValuePair<string, byte[]> kv in _context.UserProperties)
            {
                p.UserCollected[kv.Key] = kv.Value;
            }
        }
        p.OriginalFileNumber = _context.OriginalFileNumber;
        p.DbId = _context.DbId;
        p.DbSessionId = _context.DbSessionId;
        p.DbHostId = _context.DbHostId;
        p.FilterPolicyName = _options.FilterPolicy?.Name ?? "";
        p.ComparatorName = InternalKeyComparer.BytewiseComparatorName;
        p.MergeOperatorName = _options.MergeOperatorName ?? "nullptr";
        p.PrefixExtractorName = Prefix.PrefixExtractorNames.Format(_options.PrefixExtractor);
        p.PropertyCollectorsNames = "[]";
        p.CompressionName = CompressionTypeNames.ToRocksDbName(_options.Compression);
        p.CompressionOptions = string.Create(System.Globalization.CultureInfo.InvariantCulture,
            $"window_bits=-14; level={_options.CompressionLevel}; strategy=0; max_dict_bytes=0; zstd_max_train_bytes=0; enabled=0; max_dict_buffer_bytes=0; use_zstd_dict_trainer=1; ");
        p.WholeKeyFiltering = _options.WholeKeyFiltering;
        p.PrefixFiltering = _options.PrefixExtractor != null;
    }

    private void EnsureOpen()
    {
        if (_closed)
        {
            throw new InvalidOperationException("The table builder was finished or abandoned.");
        }
    }
}
