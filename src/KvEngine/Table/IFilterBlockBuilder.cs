namespace KvEngine.Table;

/// <summary>
/// Builds a table's filter block(s) from its keys: one full filter
/// (<see cref="FullFilterBlockBuilder"/>) or filter partitions with a top-level filter index
/// (<see cref="PartitionedFilterBlockBuilder"/>). Not thread-safe.
/// </summary>
internal interface IFilterBlockBuilder : IDisposable
{
    /// <summary>
    /// Metaindex key naming the filter block, e.g. "fullfilter.rocksdb.BuiltinBloomFilter" or
    /// "partitionedfilter.rocksdb.BuiltinBloomFilter".
    /// </summary>
    string MetaIndexKey { get; }

    /// <summary>Offers one table entry's user key (the builder decides what goes in: whole keys, prefixes).</summary>
    void Add(ReadOnlySpan<byte> userKey);

    /// <summary>True when nothing was added, so no filter block should be written.</summary>
    bool IsEmpty { get; }

    /// <summary>
    /// Tells the builder, before the first key, that the table will hold at most
    /// <paramref name="userKeys"/> distinct user keys; a builder that can size its filter from that
    /// does (<see cref="Filters.IFilterBitsBuilder.TryPresize"/>), others ignore it.
    /// </summary>
    void ExpectKeys(long userKeys)
    {
    }

    /// <summary>Keys that went into the filter (RocksDB's rocksdb.num.filter_entries).</summary>
    long EntriesAdded { get; }

    /// <summary>
    /// Writes the filter block(s), uncompressed, through <paramref name="writer"/> and returns the
    /// handle the metaindex entry points at (the filter, or the top-level filter index).
    /// <paramref name="filterSize"/> is RocksDB's rocksdb.filter.size: the contents of every block
    /// written, trailers excluded.
    /// </summary>
    BlockHandle Finish(ITableBlockWriter writer, out long filterSize);
}
