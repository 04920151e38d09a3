namespace KvEngine;

/// <summary>
/// Options of one column family (RocksDB's ColumnFamilyOptions with its BlockBasedTableOptions):
/// memtables, table format, compression, filters, caches and compaction. <see cref="KvOptions"/>
/// derives from it: its values are the default family's. A family opened or created with its own
/// instance gets those values; the database copies them at
/// open or create, so an instance may be shared and changed afterwards without effect.
/// </summary>
public class ColumnFamilyOptions
{
    /// <summary>Bytes a memtable may hold before it becomes immutable and is flushed (64 MiB).</summary>
    public long WriteBufferSize { get; set; } = 64L << 20;

    /// <summary>Mutable plus immutable memtables allowed before writers wait for a flush (2).</summary>
    public int MaxWriteBufferNumber { get; set; } = 2;

    /// <summary>
    /// Immutable memtables that must wait before a background flush starts (RocksDB's
    /// min_write_buffer_number_to_merge, 1); capped at <see cref="MaxWriteBufferNumber"/> - 1, as
    /// RocksDB sanitizes it. Flush() and closing flush whatever waits. Above 1, a flush merges
    /// every waiting memtable into one level-0 table, as RocksDB does; at 1 each memtable gets its own.
    /// </summary>
    public int MinWriteBufferNumberToMerge { get; set; } = 1;

    /// <summary>
    /// Size of each memtable's hash index over user keys, as a fraction of
    /// <see cref="WriteBufferSize"/> (1/64: 1 MiB of 4-byte buckets, 262,144 of them, for a 64 MiB
    /// memtable), or 0 for none. A point lookup (Get, MultiGet, merge lookups) then finds its key's
    /// newest memtable entry in one or two memory accesses instead of a skip-list search; every
    /// entry costs a 4-byte link. KvEngine's own option (RocksDB's nearest is a memtable Bloom filter,
    /// memtable_whole_key_filtering): not written to the OPTIONS file. At most 0.25.
    /// </summary>
    public double MemTableHashIndexRatio { get; set; } = 1.0 / 64;

    /// <summary>
    /// Back memtables with transparent huge pages where the kernel offers them (Linux with THP
    /// "always" or "madvise") and <see cref="WriteBufferSize"/> is at least 8 huge pages (16 MiB):
    /// arena blocks are then one huge page (2 MiB), aligned and advised <c>MADV_HUGEPAGE</c>, so
    /// a skip-list search over a large memtable takes no page walk per miss. A memtable's first
    /// block (half a huge page) and its hash-index buckets keep small pages (idle memtables stay small); each
    /// memtable may hold up to one huge page more resident than it has used. Where the kernel
    /// defragments for advised mappings (THP <c>defrag</c> = <c>madvise</c>) and memory is
    /// fragmented, the first touch of a block may wait for that compaction: turn this off for
    /// writers that cannot take such a pause on such hosts. On by default.
    /// KvEngine's own option (RocksDB's memtable_huge_page_size asks for reserved hugetlbfs pages
    /// instead): not written to the OPTIONS file.
    /// </summary>
    public bool MemTableHugePages { get; set; } = true;

    /// <summary>Target size of uncompressed data blocks in bytes (4096).</summary>
    public int BlockSize { get; set; } = 4096;

    /// <summary>Keys between restart points in data blocks (16).</summary>
    public int BlockRestartInterval { get; set; } = 16;

    /// <summary>Compression for data blocks: Snappy, as in RocksDB, by default.</summary>
    public KvCompressionType Compression { get; set; } = KvCompressionType.Snappy;

    /// <summary>
    /// Codec level (RocksDB's compression_opts.level). The default,
    /// <see cref="DefaultCompressionLevel"/>, is the codec's own default (ZSTD 3, LZ4HC 9, LZ4
    /// acceleration 1). For ZSTD and LZ4HC the codec's scale (ZSTD -131072..22, LZ4HC 1..12); for
    /// LZ4 a negative level is the acceleration (-level), as RocksDB passes it; Snappy has no level.
    /// </summary>
    public int CompressionLevel { get; set; } = DefaultCompressionLevel;

    /// <summary>
    /// Compression of compaction outputs written to the bottommost level (RocksDB's
    /// bottommost_compression): commonly ZSTD under LZ4 or Snappy above, since most data lives there.
    /// Null (the default, RocksDB's kDisableCompressionOption) uses <see cref="Compression"/>.
    /// As in RocksDB, an output is bottommost when no level below it holds data; flushes always
    /// use <see cref="Compression"/>.
    /// </summary>
    public KvCompressionType? BottommostCompression { get; set; }

    /// <summary>
    /// Codec level for <see cref="BottommostCompression"/> (RocksDB's bottommost_compression_opts.level);
    /// null uses <see cref="CompressionLevel"/>.
    /// </summary>
    public int? BottommostCompressionLevel { get; set; }

    /// <summary>RocksDB's kDefaultCompressionLevel (32767): "the codec's default level".</summary>
    public const int DefaultCompressionLevel = 32767;

    /// <summary>Checksum written in block trailers (XXH3, RocksDB 7.8's default).</summary>
    public KvChecksumType Checksum { get; set; } = KvChecksumType.XxHash3;

    /// <summary>Bloom filter bits per key for whole-key filters; 0 writes no filter (10).</summary>
    public double BloomBitsPerKey { get; set; } = 10;

    /// <summary>
    /// Maps keys to prefixes for prefix Bloom filters and prefix seek (RocksDB: prefix_extractor;
    /// null, the default, for none). With one, table filters also hold the prefix of every key in
    /// its domain, and iterators' Seek skips tables whose filter excludes the target's prefix unless
    /// <see cref="ReadOptions.TotalOrderSeek"/> is set (see <see cref="ReadOptions.PrefixSameAsStart"/>).
    /// </summary>
    public KvPrefixExtractor? PrefixExtractor { get; set; }

    /// <summary>
    /// Put whole keys into table filters, so point lookups can use them (RocksDB's
    /// BlockBasedTableOptions.whole_key_filtering; true). False with a
    /// <see cref="PrefixExtractor"/> makes prefix-only filters: smaller, and lookups check the key's prefix.
    /// </summary>
    public bool WholeKeyFiltering { get; set; } = true;

    /// <summary>Never compact automatically; only <see cref="KvDb.CompactRange(byte[], byte[])"/> compacts (false).</summary>
    public bool DisableAutoCompactions { get; set; }

    /// <summary>
    /// Read-triggered compaction of level 0 (LevelDB's seek compaction, for level 0): a Get that
    /// read a data block of a level-0 file from the file (not the block cache) and did not find
    /// its key there is charged as this many bytes of compaction, and once the charges since level
    /// 0 was last compacted reach the bytes a level-0 compaction would read (level 0 and what it
    /// overlaps in the base level), one is scheduled when no size-triggered compaction is due.
    /// Level-0 files below <see cref="Level0FileNumCompactionTrigger"/> otherwise stay for as long
    /// as no more are written, and every read searches each of them (without Bloom filters, a
    /// block read and decompressed per file). A miss charged as the compaction of about 1 KiB (the
    /// CPU of reading and decompressing a 4 KiB block against that of merging and recompressing
    /// 1 KiB) schedules the compaction about when the reads it would have saved have cost as much
    /// as it does (the ski-rental rule: within about twice the better of compacting at once and
    /// never, as far as that cost ratio holds and the compaction is not held up by others).
    /// Leveled compaction only; Gets and MultiGet (not iterators); files with whole-key Bloom
    /// filters are charged only for false positives. KvEngine's own option (RocksDB removed seek
    /// compaction): not written to the OPTIONS file. 0 turns it off; 1024 by default.
    /// </summary>
    public long ReadTriggeredCompactionBytesPerMiss { get; set; } = 1024;

    /// <summary>
    /// Called for values while compactions rewrite them, to keep, remove or change each (RocksDB:
    /// compaction_filter; null, the default, keeps everything). Shared by every compaction: must be
    /// thread-safe. See <see cref="KvCompactionFilter"/> for which entries it sees.
    /// </summary>
    public KvCompactionFilter? CompactionFilter { get; set; }

    /// <summary>
    /// Combines the merge operands written with <see cref="KvDb.Merge(ReadOnlySpan{byte}, ReadOnlySpan{byte}, WriteOptions)"/> (RocksDB: merge_operator;
    /// null, the default, means merges cannot be read or compacted). Its name is written into every
    /// table; a database whose tables or log hold operands opens only with an operator of the same
    /// name. Shared by every read and compaction: must be thread-safe. See <see cref="KvMergeOperator"/>.
    /// </summary>
    public KvMergeOperator? MergeOperator { get; set; }

    /// <summary>Level-0 files that trigger a compaction into the base level (4).</summary>
    public int Level0FileNumCompactionTrigger { get; set; } = 4;

    /// <summary>Level-0 files at which each write group is delayed by 1 ms (20).</summary>
    public int Level0SlowdownWritesTrigger { get; set; } = 20;

    /// <summary>Level-0 files at which writers wait until compaction catches up (36).</summary>
    public int Level0StopWritesTrigger { get; set; } = 36;

    /// <summary>Target size of level 1 (or of the base level), in bytes (256 MiB).</summary>
    public long MaxBytesForLevelBase { get; set; } = 256L << 20;

    /// <summary>Each level's target is this many times the previous level's (10).</summary>
    public double MaxBytesForLevelMultiplier { get; set; } = 10;

    /// <summary>
    /// Derive level targets from the size of the last level and compact level 0 into the first
    /// non-empty level (RocksDB: level_compaction_dynamic_level_bytes; 7.8's default false).
    /// </summary>
    public bool LevelCompactionDynamicLevelBytes { get; set; }

    /// <summary>Target size of compaction output files (64 MiB).</summary>
    public long TargetFileSizeBase { get; set; } = 64L << 20;

    /// <summary>Each level's target file size is this many times the previous level's (1).</summary>
    public int TargetFileSizeMultiplier { get; set; } = 1;

    /// <summary>Upper bound of one compaction's input bytes; 0 means 25 x <see cref="TargetFileSizeBase"/>.</summary>
    public long MaxCompactionBytes { get; set; }

    /// <summary>
    /// Align compaction output files to the next level's file boundaries, letting them range from
    /// 50% to 200% of the target size (RocksDB: level_compaction_dynamic_file_size, true).
    /// </summary>
    public bool LevelCompactionDynamicFileSize { get; set; } = true;

    /// <summary>
    /// Size each Bloom filter so the memory holding it fills an allocator size class exactly, with
    /// the mean false-positive rate kept on the bits-per-key target; costs about 1-2% more filter
    /// bytes on disk (RocksDB: optimize_filters_for_memory; false).
    /// </summary>
    public bool OptimizeFiltersForMemory { get; set; }

    /// <summary>
    /// The block cache for data blocks (and, with <see cref="CacheIndexAndFilterBlocks"/>, index
    /// and filter blocks). Null gives each database its own cache of
    /// <see cref="KvBlockCache.DefaultCapacity"/> (8 MiB, as RocksDB does), with a compressed
    /// secondary cache when <see cref="KvOptions.CompressedSecondaryCacheSize"/> is set; a cache passed here
    /// carries its own secondary-cache settings and may be shared by several databases.
    /// </summary>
    public KvBlockCache? BlockCache { get; set; }

    /// <summary>
    /// Keep index and filter blocks in the block cache at high priority, charged to it
    /// (RocksDB: cache_index_and_filter_blocks, false: the table reader holds them, uncharged).
    /// </summary>
    public bool CacheIndexAndFilterBlocks { get; set; }

    /// <summary>
    /// Keep the index and filter of level-0 tables no larger than 1.5 x <see cref="WriteBufferSize"/>
    /// pinned in the cache while the table is open (false): with <see cref="CacheIndexAndFilterBlocks"/>
    /// for unpartitioned tables, and always for the partitions of partitioned ones (RocksDB's
    /// fallback for the unpartitioned and partition pinning tiers, <see cref="MetadataCacheOptions"/>).
    /// </summary>
    public bool PinL0FilterAndIndexBlocksInCache { get; set; }

    /// <summary>
    /// Index written with new tables: one index block (the default) or index partitions under a
    /// top-level index (RocksDB: index_type, kTwoLevelIndexSearch = 2).
    /// </summary>
    public KvIndexType IndexType { get; set; } = KvIndexType.BinarySearch;

    /// <summary>
    /// With <see cref="KvIndexType.TwoLevelIndexSearch"/>, partition the Bloom filter too
    /// (RocksDB: partition_filters, false; ignored with a single-level index, as RocksDB does).
    /// </summary>
    public bool PartitionFilters { get; set; }

    /// <summary>Target size of index and filter partitions in bytes (RocksDB: metadata_block_size, 4096).</summary>
    public int MetadataBlockSize { get; set; } = 4096;

    /// <summary>
    /// How new tables' data blocks are searched by a Get: binary search only, or with RocksDB's
    /// data-block hash index (RocksDB: data_block_index_type; see <see cref="KvDataBlockIndexType"/>).
    /// </summary>
    public KvDataBlockIndexType DataBlockIndexType { get; set; } = KvDataBlockIndexType.BinarySearch;

    /// <summary>
    /// With <see cref="KvDataBlockIndexType.BinaryAndHash"/>, keys per bucket of a block's hash index
    /// (RocksDB: data_block_hash_table_util_ratio, 0.75): lower means more buckets, fewer collisions
    /// and a larger block.
    /// </summary>
    public double DataBlockHashTableUtilRatio { get; set; } = 0.75;

    /// <summary>
    /// Cut filter partitions on their own key count instead of together with index partitions
    /// (RocksDB: decouple_partitioned_filters, PR 12939; true as in current RocksDB; false writes
    /// exactly what RocksDB 7.8 writes).
    /// </summary>
    public bool DecouplePartitionedFilters { get; set; } = true;

    /// <summary>
    /// With <see cref="CacheIndexAndFilterBlocks"/>, keep the top-level index and top-level filter
    /// index of partitioned tables pinned in the cache (RocksDB: pin_top_level_index_and_filter, true).
    /// </summary>
    public bool PinTopLevelIndexAndFilter { get; set; } = true;

    /// <summary>Pinning tiers for index and filter blocks (RocksDB: metadata_cache_options).</summary>
    public KvMetadataCacheOptions MetadataCacheOptions { get; set; } = new();

    /// <summary>Leveled (the default), universal or FIFO compaction (RocksDB: compaction_style).</summary>
    public CompactionStyle CompactionStyle { get; set; } = CompactionStyle.Level;

    /// <summary>
    /// Which file of a level a leveled compaction picks: the one overlapping the fewest next-level
    /// bytes per byte (the default) or round robin (RocksDB: compaction_pri).
    /// </summary>
    public CompactionPri CompactionPri { get; set; } = CompactionPri.MinOverlappingRatio;

    /// <summary>
    /// FIFO: total table bytes above which the oldest files are deleted (RocksDB:
    /// compaction_options_fifo.max_table_files_size, 1 GiB).
    /// </summary>
    public long FifoMaxTableFilesSize { get; set; } = 1L << 30;

    /// <summary>
    /// FIFO: merge runs of small new level-0 files into one (RocksDB:
    /// compaction_options_fifo.allow_compaction, false).
    /// </summary>
    public bool FifoAllowCompaction { get; set; }

    /// <summary>Universal compaction's settings (RocksDB: compaction_options_universal).</summary>
    public CompactionOptionsUniversal CompactionOptionsUniversal { get; set; } = new();

    /// <summary>
    /// Seconds after which data is compacted again whatever the sizes (RocksDB: ttl). Leveled: a
    /// file (above the last non-empty level) whose oldest data was flushed longer ago is pushed
    /// down a level; universal: as <see cref="PeriodicCompactionSeconds"/> (the smaller wins); FIFO:
    /// the oldest files whose data is older are deleted. 0 turns it off. Null (the default) is
    /// RocksDB 7.8's: 30 days, except 0 under FIFO (which then takes
    /// <see cref="PeriodicCompactionSeconds"/>, itself 30 days by default there).
    /// </summary>
    public long? Ttl { get; set; }

    /// <summary>
    /// Seconds after which a file is rewritten (RocksDB: periodic_compaction_seconds): a file
    /// written longer ago is compacted within its level (leveled; a level-0 file goes to the base
    /// level), or the runs from it to the last run are merged (universal), so a
    /// <see cref="CompactionFilter"/> eventually sees every entry even when no write reaches its
    /// key range. 0 turns it off. Null (the default) is RocksDB 7.8's: 30 days when a compaction
    /// filter is set (or under FIFO, where it sets the TTL), otherwise 0.
    /// </summary>
    public long? PeriodicCompactionSeconds { get; set; }

    /// <summary>A copy of the family's settings alone (no database-wide option), as a family opened with them keeps.</summary>
    internal ColumnFamilyOptions CloneFamily()
    {
        var clone = new ColumnFamilyOptions();
        clone.CopyFamilyFrom(this);
        return clone;
    }

    /// <summary>Copies every family setting of <paramref name="other"/> into this instance.</summary>
    internal void CopyFamilyFrom(ColumnFamilyOptions other)
    {
        WriteBufferSize = other.WriteBufferSize;
        MaxWriteBufferNumber = other.MaxWriteBufferNumber;
        MinWriteBufferNumberToMerge = other.MinWriteBufferNumberToMerge;
        MemTableHashIndexRatio = other.MemTableHashIndexRatio;
        MemTableHugePages = other.MemTableHugePages;
        BlockSize = other.BlockSize;
        BlockRestartInterval = other.BlockRestartInterval;
        Compression = other.Compression;
        CompressionLevel = other.CompressionLevel;
        BottommostCompression = other.BottommostCompression;
        BottommostCompressionLevel = other.BottommostCompressionLevel;
        Checksum = other.Checksum;
        BloomBitsPerKey = other.BloomBitsPerKey;
        PrefixExtractor = other.PrefixExtractor;
        WholeKeyFiltering = other.WholeKeyFiltering;
        DisableAutoCompactions = other.DisableAutoCompactions;
        ReadTriggeredCompactionBytesPerMiss = other.ReadTriggeredCompactionBytesPerMiss;
        CompactionFilter = other.CompactionFilter;
        MergeOperator = other.MergeOperator;
        Level0FileNumCompactionTrigger = other.Level0FileNumCompactionTrigger;
        Level0SlowdownWritesTrigger = other.Level0SlowdownWritesTrigger;
        Level0StopWritesTrigger = other.Level0StopWritesTrigger;
        MaxBytesForLevelBase = other.MaxBytesForLevelBase;
        MaxBytesForLevelMultiplier = other.MaxBytesForLevelMultiplier;
        LevelCompactionDynamicLevelBytes = other.LevelCompactionDynamicLevelBytes;
        TargetFileSizeBase = other.TargetFileSizeBase;
        TargetFileSizeMultiplier = other.TargetFileSizeMultiplier;
        MaxCompactionBytes = other.MaxCompactionBytes;
        LevelCompactionDynamicFileSize = other.LevelCompactionDynamicFileSize;
        OptimizeFiltersForMemory = other.OptimizeFiltersForMemory;
        BlockCache = other.BlockCache;
        CacheIndexAndFilterBlocks = other.CacheIndexAndFilterBlocks;
        PinL0FilterAndIndexBlocksInCache = other.PinL0FilterAndIndexBlocksInCache;
        IndexType = other.IndexType;
        PartitionFilters = other.PartitionFilters;
        MetadataBlockSize = other.MetadataBlockSize;
        DataBlockIndexType = other.DataBlockIndexType;
        DataBlockHashTableUtilRatio = other.DataBlockHashTableUtilRatio;
        DecouplePartitionedFilters = other.DecouplePartitionedFilters;
        PinTopLevelIndexAndFilter = other.PinTopLevelIndexAndFilter;
        MetadataCacheOptions = other.MetadataCacheOptions?.Clone()!;
        CompactionStyle = other.CompactionStyle;
        CompactionPri = other.CompactionPri;
        FifoMaxTableFilesSize = other.FifoMaxTableFilesSize;
        FifoAllowCompaction = other.FifoAllowCompaction;
        CompactionOptionsUniversal = other.CompactionOptionsUniversal?.Clone()!;
        Ttl = other.Ttl;
        PeriodicCompactionSeconds = other.PeriodicCompactionSeconds;
    }

    /// <summary>Throws <see cref="ArgumentException"/> for a family setting out of range.</summary>
    internal void ValidateFamily()
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(WriteBufferSize, 4096, nameof(WriteBufferSize));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(WriteBufferSize, 1L << 40, nameof(WriteBufferSize));
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxWriteBufferNumber, 2, nameof(MaxWriteBufferNumber));
        ArgumentOutOfRangeException.ThrowIfLessThan(MinWriteBufferNumberToMerge, 1, nameof(MinWriteBufferNumberToMerge));
        if (!(MemTableHashIndexRatio >= 0 && MemTableHashIndexRatio <= 0.25))
        {
            throw new ArgumentOutOfRangeException(nameof(MemTableHashIndexRatio), MemTableHashIndexRatio, "From 0 (no index) to 0.25.");
        }
        ArgumentOutOfRangeException.ThrowIfNegative(ReadTriggeredCompactionBytesPerMiss, nameof(ReadTriggeredCompactionBytesPerMiss));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(ReadTriggeredCompactionBytesPerMiss, 1L << 30, nameof(ReadTriggeredCompactionBytesPerMiss));
        ArgumentOutOfRangeException.ThrowIfLessThan(BlockSize, 256, nameof(BlockSize));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(BlockSize, 64 << 20, nameof(BlockSize));
        ArgumentOutOfRangeException.ThrowIfLessThan(BlockRestartInterval, 1, nameof(BlockRestartInterval));
        ArgumentOutOfRangeException.ThrowIfLessThan(MetadataBlockSize, 1, nameof(MetadataBlockSize));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(MetadataBlockSize, 64 << 20, nameof(MetadataBlockSize));
        if (!Enum.IsDefined(IndexType))
        {
            throw new ArgumentException($"Unknown index type {(int)IndexType}.", nameof(IndexType));
        }
        if (!Enum.IsDefined(DataBlockIndexType))
        {
            throw new ArgumentException($"Unknown data block index type {(int)DataBlockIndexType}.", nameof(DataBlockIndexType));
        }
        if (!(DataBlockHashTableUtilRatio > 0 && DataBlockHashTableUtilRatio <= 64))
        {
            throw new ArgumentOutOfRangeException(nameof(DataBlockHashTableUtilRatio), DataBlockHashTableUtilRatio, "Above 0, at most 64.");
        }
        ArgumentNullException.ThrowIfNull(MetadataCacheOptions, nameof(MetadataCacheOptions));
        foreach (KvPinningTier tier in (ReadOnlySpan<KvPinningTier>)[MetadataCacheOptions.TopLevelIndexPinning, MetadataCacheOptions.PartitionPinning, MetadataCacheOptions.UnpartitionedPinning])
        {
            if (!Enum.IsDefined(tier))
            {
                throw new ArgumentException($"Unknown pinning tier {(int)tier}.", nameof(MetadataCacheOptions));
            }
        }
        if (!Enum.IsDefined(Compression))
        {
            throw new ArgumentException($"Unknown compression type {(int)Compression}.", nameof(Compression));
        }
        if (BottommostCompression is { } bottommost && !Enum.IsDefined(bottommost))
        {
            throw new ArgumentException($"Unknown compression type {(int)bottommost}.", nameof(BottommostCompression));
        }
        ValidateCompressionLevel(CompressionLevel, nameof(CompressionLevel));
        if (BottommostCompressionLevel is { } bottommostLevel)
        {
            ValidateCompressionLevel(bottommostLevel, nameof(BottommostCompressionLevel));
        }
        if (!Enum.IsDefined(Checksum))
        {
            throw new ArgumentException($"Unknown checksum type {(int)Checksum}.", nameof(Checksum));
        }
        if (double.IsNaN(BloomBitsPerKey) || BloomBitsPerKey < 0 || BloomBitsPerKey > 100)
        {
            throw new ArgumentOutOfRangeException(nameof(BloomBitsPerKey), BloomBitsPerKey, "Bits per key must be in [0, 100].");
        }
        ArgumentOutOfRangeException.ThrowIfLessThan(Level0FileNumCompactionTrigger, 1, nameof(Level0FileNumCompactionTrigger));
        ArgumentOutOfRangeException.ThrowIfLessThan(Level0SlowdownWritesTrigger, Level0FileNumCompactionTrigger, nameof(Level0SlowdownWritesTrigger));
        ArgumentOutOfRangeException.ThrowIfLessThan(Level0StopWritesTrigger, Level0SlowdownWritesTrigger, nameof(Level0StopWritesTrigger));
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxBytesForLevelBase, 1024, nameof(MaxBytesForLevelBase));
        if (double.IsNaN(MaxBytesForLevelMultiplier) || MaxBytesForLevelMultiplier < 2 || MaxBytesForLevelMultiplier > 1000)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxBytesForLevelMultiplier), MaxBytesForLevelMultiplier, "The level multiplier must be in [2, 1000].");
        }
        ArgumentOutOfRangeException.ThrowIfLessThan(TargetFileSizeBase, 1024, nameof(TargetFileSizeBase));
        ArgumentOutOfRangeException.ThrowIfLessThan(TargetFileSizeMultiplier, 1, nameof(TargetFileSizeMultiplier));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(TargetFileSizeMultiplier, 100, nameof(TargetFileSizeMultiplier));
        ArgumentOutOfRangeException.ThrowIfNegative(MaxCompactionBytes, nameof(MaxCompactionBytes));
        if (!Enum.IsDefined(CompactionStyle))
        {
            throw new ArgumentException($"Unsupported compaction style {(int)CompactionStyle} (leveled 0, universal 1 and FIFO 2 are built).", nameof(CompactionStyle));
        }
        ArgumentNullException.ThrowIfNull(CompactionOptionsUniversal, nameof(CompactionOptionsUniversal));
        CompactionOptionsUniversal.Validate();
        if (!Enum.IsDefined(CompactionPri))
        {
            throw new ArgumentException($"Unsupported compaction priority {(int)CompactionPri} (3 and 4 are built).", nameof(CompactionPri));
        }
        ArgumentOutOfRangeException.ThrowIfLessThan(FifoMaxTableFilesSize, 1, nameof(FifoMaxTableFilesSize));
        if (Ttl is { } ttl)
        {
            ArgumentOutOfRangeException.ThrowIfNegative(ttl, nameof(Ttl));
        }
        if (PeriodicCompactionSeconds is { } periodic)
        {
            ArgumentOutOfRangeException.ThrowIfNegative(periodic, nameof(PeriodicCompactionSeconds));
        }
    }

    private static void ValidateCompressionLevel(int level, string name)
    {
        // ZSTD's range is the widest (ZSTD_minCLevel() = -131072 .. 22); each codec clamps to its own.
        if (level != DefaultCompressionLevel && (level < -(1 << 17) || level > 22))
        {
            throw new ArgumentOutOfRangeException(name, level,
                $"A compression level must be in [-131072, 22] or KvOptions.DefaultCompressionLevel ({DefaultCompressionLevel}).");
        }
    }
}
