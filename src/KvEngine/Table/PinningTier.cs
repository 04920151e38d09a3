namespace KvEngine.Table;

/// <summary>
/// RocksDB's PinningTier: which tables keep a kind of metadata block pinned in the block cache
/// (numbered as db_stress's --partition_pinning flags: 0 fallback .. 3 all).
/// </summary>
internal enum PinningTier
{
    /// <summary>Decided by the older flags (pin_top_level_index_and_filter, pin_l0_filter_and_index_blocks_in_cache).</summary>
    Fallback = 0,

    None = 1,

    /// <summary>Level-0 tables no larger than <see cref="TableOptions.MaxFileSizeForL0MetaPin"/> (flushed, or like it).</summary>
    FlushedAndSimilar = 2,

    All = 3,
}
