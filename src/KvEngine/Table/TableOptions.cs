using KvEngine.Compression;
using KvEngine.Filters;
using KvEngine.Memory;

namespace KvEngine.Table;

/// <summary>
/// Block-based table settings for writing (and the few that matter for reading), after RocksDB's
/// BlockBasedTableOptions and CompressionOptions. Immutable record; share freely.
/// </summary>
internal sealed record TableOptions
{
    /// <summary>Target uncompressed size of a data block.</summary>
    public int BlockSize { get; init; } = 4096;

    /// <summary>Entries between restart points in data blocks.</summary>
    public int BlockRestartInterval { get; init; } = 16;

    /// <summary>Entries between restart points in index blocks.</summary>
    public int IndexBlockRestartInterval { get; init; } = 1;

    /// <summary>Close a block early when the next entry would overflow it and it is already this percent short of full at most.</summary>
    public int BlockSizeDeviation { get; init; } = 10;

    public CompressionType Compression { get; init; } = CompressionType.None;

    /// <summary>Codec level; <see cref="BlockCompression.DefaultLevel"/> means the codec's default (ZSTD 3, LZ4 acceleration 1).</summary>
    public int CompressionLevel { get; init; } = BlockCompression.DefaultLevel;

    /// <summary>Compress index blocks too (RocksDB's enable_index_compression).</summary>
    public bool EnableIndexCompression { get; init; } = true;

    public ChecksumType Checksum { get; init; } = ChecksumType.Xxh3;

    /// <summary>Filter written with each table and used when reading; null for none.</summary>
    public IFilterPolicy? FilterPolicy { get; init; }

    /// <summary>
    /// Size each filter so its in-memory bit array fills an allocator size class, keeping the mean
    /// FP rate on target (RocksDB's optimize_filters_for_memory; see <see cref="FilterMemoryOptimizer"/>).
    /// </summary>
    public bool OptimizeFiltersForMemory { get; init; }

    /// <summary>Where table readers keep loaded filters.</summary>
    public NativeAllocator FilterAllocator { get; init; } = NativeAllocator.Shared;

    /// <summary>Put whole user keys in the filter.</summary>
    public bool WholeKeyFiltering { get; init; } = true;

    /// <summary>
    /// The family's prefix extractor (null: none). Builders add the prefixes of in-domain keys to
    /// the filter and record its name (<c>rocksdb.prefix.extractor.name</c>); readers use prefix
    /// filtering only on tables recorded with the same name.
    /// </summary>
    public KvPrefixExtractor? PrefixExtractor { get; init; }

    public IndexShortening IndexShortening { get; init; } = IndexShortening.ShortenSeparators;

    /// <summary>Format version written; only 5 is supported for writing (reading accepts 2..5).</summary>
    public int FormatVersion { get; init; } = TableFormat.WriteFormatVersion;

    /// <summary>
    /// Reader limit on a block's declared uncompressed size; larger claims count as corruption. The
    /// default admits every block the writer can make: up to a 64 MiB block of smaller entries,
    /// then one entry of <see cref="WriteBatch.MaxEntrySize"/>, its header and the restart array.
    /// </summary>
    public int MaxUncompressedBlockSize { get; init; } = WriteBatch.MaxEntrySize + (128 << 20);

    /// <summary>Cache for data blocks read (and index and filter blocks with <see cref="CacheIndexAndFilterBlocks"/>); null reads every block from the file.</summary>
    public Cache.LruCache? BlockCache { get; init; }

    /// <summary>Index and filter blocks live in <see cref="BlockCache"/> (high priority) instead of the reader.</summary>
    public bool CacheIndexAndFilterBlocks { get; init; }

    /// <summary>With <see cref="CacheIndexAndFilterBlocks"/>, level-0 tables keep their index and filter pinned in the cache while open.</summary>
    public bool PinL0FilterAndIndexBlocksInCache { get; init; }

    /// <summary>
    /// Index written: <see cref="IndexType.BinarySearch"/> (one index block) or
    /// <see cref="IndexType.TwoLevelIndexSearch"/> (index partitions and a top-level index).
    /// Readers take the type from each table's properties.
    /// </summary>
    public IndexType IndexType { get; init; } = IndexType.BinarySearch;

    /// <summary>
    /// With <see cref="IndexType.TwoLevelIndexSearch"/>, partition the filter too (RocksDB's
    /// partition_filters; ignored, as RocksDB sanitizes it away, with a single-level index).
    /// </summary>
    public bool PartitionFilters { get; init; }

    /// <summary>Target size of index and filter partitions (RocksDB's metadata_block_size, 4096).</summary>
    public int MetadataBlockSize { get; init; } = 4096;

    /// <summary>Data blocks written with RocksDB's hash index (<see cref="KvDataBlockIndexType.BinaryAndHash"/>) or without; readers follow each block's footer.</summary>
    public KvDataBlockIndexType DataBlockIndexType { get; init; } = KvDataBlockIndexType.BinarySearch;

    /// <summary>Keys per bucket of the data-block hash index (RocksDB's data_block_hash_table_util_ratio, 0.75).</summary>
    public double DataBlockHashTableUtilRatio { get; init; } = 0.75;

    /// <summary>
    /// Cut filter partitions on their own key count instead of when the index partition is cut
    /// (RocksDB's decouple_partitioned_filters, PR 12939; true as in current RocksDB; false writes
    /// what RocksDB 7.8 writes).
    /// </summary>
    public bool DecouplePartitionedFilters { get; init; } = true;

    /// <summary>
    /// With <see cref="CacheIndexAndFilterBlocks"/>, keep the top-level index and top-level filter
    /// index of partitioned tables pinned in the cache (RocksDB's pin_top_level_index_and_filter, true).
    /// </summary>
    public bool PinTopLevelIndexAndFilter { get; init; } = true;

    /// <summary>RocksDB's metadata_cache_options.top_level_index_pinning (acts with CacheIndexAndFilterBlocks).</summary>
    public PinningTier TopLevelIndexPinning { get; init; } = PinningTier.Fallback;

    /// <summary>RocksDB's metadata_cache_options.partition_pinning: pinned partitions are read in one go at open.</summary>
    public PinningTier PartitionPinning { get; init; } = PinningTier.Fallback;

    /// <summary>RocksDB's metadata_cache_options.unpartitioned_pinning (acts with CacheIndexAndFilterBlocks).</summary>
    public PinningTier UnpartitionedPinning { get; init; } = PinningTier.Fallback;

    /// <summary>
    /// Level-0 tables up to this size count as "flushed and similar" for pinning (RocksDB:
    /// write_buffer_size / 2 * 3; unlimited by default).
    /// </summary>
    public long MaxFileSizeForL0MetaPin { get; init; } = long.MaxValue;

    /// <summary>Where readers allocate the native buffers holding data blocks.</summary>
    public NativeAllocator BlockAllocator { get; init; } = NativeAllocator.Shared;

    /// <summary>Table files are opened for reading with direct I/O (KvOptions.UseDirectReads).</summary>
    public bool UseDirectReads { get; init; }

    /// <summary>Buffered table files are opened with POSIX_FADV_RANDOM (KvOptions.AdviseRandomOnOpen).</summary>
    public bool AdviseRandomOnOpen { get; init; }

    /// <summary>Flushes and compactions write table files with direct I/O (KvOptions.UseDirectIoForFlushAndCompaction).</summary>
    public bool UseDirectWrites { get; init; }

    /// <summary>Bytes compactions read ahead in each input table (KvOptions.CompactionReadaheadSize; 0: none).</summary>
    public int CompactionReadaheadSize { get; init; }

    /// <summary>Where readers count filter results and block reads; null counts nothing.</summary>
    public KvStatistics? Statistics { get; init; }

    /// <summary>
    /// The configured merge operator's name, or null for none: written as the
    /// <c>rocksdb.merge.operator</c> property ("nullptr" when null), and checked against the
    /// property of tables holding merge operands when they are opened (see the table cache, Versions/TableCache.cs).
    /// </summary>
    public string? MergeOperatorName { get; init; }

    /// <summary>Throws <see cref="ArgumentException"/> for values the builder cannot honour.</summary>
    /// <summary>
    /// The table-format settings of a column family (no cache or pinning settings): block and
    /// metadata sizes, compression, checksum, Bloom filter and index layout. SstFileWriter writes
    /// with these; a family's table writers want the same mapping.
    /// </summary>
    public static TableOptions ForFamily(ColumnFamilyOptions family, KvCompressionType compression, int compressionLevel) => new()
    {
        BlockSize = family.BlockSize,
        BlockRestartInterval = family.BlockRestartInterval,
        Compression = (CompressionType)(byte)compression,
        CompressionLevel = compressionLevel,
        Checksum = (ChecksumType)(byte)family.Checksum,
        FilterPolicy = family.BloomBitsPerKey > 0 ? new FastLocalBloomPolicy(family.BloomBitsPerKey) : null,
        OptimizeFiltersForMemory = family.OptimizeFiltersForMemory,
        IndexType = (IndexType)(uint)family.IndexType,
        PartitionFilters = family.PartitionFilters,
        MetadataBlockSize = family.MetadataBlockSize,
        DataBlockIndexType = family.DataBlockIndexType,
        DataBlockHashTableUtilRatio = family.DataBlockHashTableUtilRatio,
        DecouplePartitionedFilters = family.DecouplePartitionedFilters,
        WholeKeyFiltering = family.WholeKeyFiltering,
        PrefixExtractor = family.PrefixExtractor,
    };

    public void Validate()
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(BlockSize, 1, nameof(BlockSize));
        ArgumentOutOfRangeException.ThrowIfLessThan(BlockRestartInterval, 1, nameof(BlockRestartInterval));
        ArgumentOutOfRangeException.ThrowIfLessThan(IndexBlockRestartInterval, 1, nameof(IndexBlockRestartInterval));
        ArgumentOutOfRangeException.ThrowIfNegative(BlockSizeDeviation, nameof(BlockSizeDeviation));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(BlockSizeDeviation, 100, nameof(BlockSizeDeviation));
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxUncompressedBlockSize, 1, nameof(MaxUncompressedBlockSize));
        ArgumentOutOfRangeException.ThrowIfLessThan(MetadataBlockSize, 1, nameof(MetadataBlockSize));
        if (!Enum.IsDefined(DataBlockIndexType))
        {
            throw new ArgumentException($"Unknown data block index type {(int)DataBlockIndexType}.", nameof(DataBlockIndexType));
        }
        if (!(DataBlockHashTableUtilRatio > 0 && DataBlockHashTableUtilRatio <= 64))
        {
            throw new ArgumentOutOfRangeException(nameof(DataBlockHashTableUtilRatio), DataBlockHashTableUtilRatio, "Above 0, at most 64.");
        }
        if (IndexType is not (IndexType.BinarySearch or IndexType.TwoLevelIndexSearch))
        {
            throw new ArgumentException($"Index type {IndexType} cannot be written; use BinarySearch or TwoLevelIndexSearch.", nameof(IndexType));
        }
        foreach (PinningTier tier in (ReadOnlySpan<PinningTier>)[TopLevelIndexPinning, PartitionPinning, UnpartitionedPinning])
        {
            if (!Enum.IsDefined(tier))
            {
                throw new ArgumentException($"Unknown pinning tier {(int)tier}.", nameof(PartitionPinning));
            }
        }
        if (FormatVersion != TableFormat.WriteFormatVersion)
        {
            throw new ArgumentException($"Only format_version {TableFormat.WriteFormatVersion} can be written.", nameof(FormatVersion));
        }
        if (!Enum.IsDefined(Checksum))
        {
            throw new ArgumentException($"Unknown checksum type {Checksum}.", nameof(Checksum));
        }
        if (!CompressionTypeNames.IsSupported(Compression))
        {
            throw new ArgumentException(
                $"Compression {CompressionTypeNames.ToRocksDbName(Compression)} cannot be written; use None, LZ4, LZ4HC or ZSTD.",
                nameof(Compression));
        }
    }
}
