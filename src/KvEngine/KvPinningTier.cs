namespace KvEngine;

/// <summary>
/// Which tables keep a kind of metadata block pinned in the block cache (RocksDB's PinningTier;
/// the numbers are db_stress's: 0 fallback .. 3 all).
/// </summary>
public enum KvPinningTier
{
    /// <summary>Decided by the older options (<see cref="ColumnFamilyOptions.PinTopLevelIndexAndFilter"/>, <see cref="ColumnFamilyOptions.PinL0FilterAndIndexBlocksInCache"/>).</summary>
    Fallback = 0,

    /// <summary>No table.</summary>
    None = 1,

    /// <summary>Level-0 tables no larger than 1.5 x <see cref="ColumnFamilyOptions.WriteBufferSize"/> (flushed, or like it).</summary>
    FlushedAndSimilar = 2,

    /// <summary>Every table.</summary>
    All = 3,
}
