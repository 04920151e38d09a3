namespace KvEngine;

/// <summary>
/// The index a table is written with (RocksDB's BlockBasedTableOptions::IndexType). The values are
/// RocksDB's, stored in each table's "rocksdb.block.based.table.index.type" property (persisted:
/// never renumber). Readers take each table's own type.
/// </summary>
public enum KvIndexType
{
    /// <summary>One index block per table (kBinarySearch, the default).</summary>
    BinarySearch = 0,

    /// <summary>Index partitions of about <see cref="ColumnFamilyOptions.MetadataBlockSize"/> under a top-level index (kTwoLevelIndexSearch).</summary>
    TwoLevelIndexSearch = 2,
}
