namespace KvEngine.Table;

/// <summary>
/// RocksDB's BlockBasedTableOptions::IndexType, stored as a fixed32 in the
/// "rocksdb.block.based.table.index.type" property. Persisted: never renumber.
/// </summary>
internal enum IndexType : uint
{
    BinarySearch = 0,
    HashSearch = 1,
    TwoLevelIndexSearch = 2,
    BinarySearchWithFirstKey = 3,
}
