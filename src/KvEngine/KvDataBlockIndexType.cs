namespace KvEngine;

/// <summary>
/// How a data block is searched for a point lookup (RocksDB's
/// BlockBasedTableOptions::DataBlockIndexType, the OPTIONS key <c>data_block_index_type</c>). The
/// choice is written into each data block (bit 31 of its footer), so readers follow each block's
/// own; RocksDB reads both.
/// </summary>
public enum KvDataBlockIndexType
{
    /// <summary>Binary search over the block's restart points (kDataBlockBinarySearch).</summary>
    BinarySearch = 0,

    /// <summary>
    /// Binary search plus a hash index from user key to restart interval appended to each data block
    /// of at most 253 restarts and 64 KiB (kDataBlockBinaryAndHash): a Get finds its restart
    /// interval without the binary search, falling back to it when two intervals share a bucket.
    /// Costs about one byte per key / <see cref="ColumnFamilyOptions.DataBlockHashTableUtilRatio"/>
    /// in each block. Iterators ignore it.
    /// </summary>
    BinaryAndHash = 1,
}
