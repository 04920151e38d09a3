namespace KvEngine;

/// <summary>
/// Pinning of index and filter blocks in the block cache (RocksDB's MetadataCacheOptions). The
/// top-level and unpartitioned tiers act only with <see cref="ColumnFamilyOptions.CacheIndexAndFilterBlocks"/>;
/// partitions always live in the block cache, so their tier always acts, and pinned partitions of
/// a table are read in one I/O when it is opened. Mutable settings object, copied at open.
/// </summary>
public sealed class KvMetadataCacheOptions
{
    /// <summary>Top-level index and top-level filter index of partitioned tables (fallback: <see cref="ColumnFamilyOptions.PinTopLevelIndexAndFilter"/>).</summary>
    public KvPinningTier TopLevelIndexPinning { get; set; } = KvPinningTier.Fallback;

    /// <summary>Index and filter partitions (fallback: <see cref="ColumnFamilyOptions.PinL0FilterAndIndexBlocksInCache"/> gives FlushedAndSimilar, else None).</summary>
    public KvPinningTier PartitionPinning { get; set; } = KvPinningTier.Fallback;

    /// <summary>Index and filter blocks of unpartitioned tables (fallback as for partitions).</summary>
    public KvPinningTier UnpartitionedPinning { get; set; } = KvPinningTier.Fallback;

    internal KvMetadataCacheOptions Clone() => (KvMetadataCacheOptions)MemberwiseClone();
}
