using System.Buffers;

namespace KvEngine.Table;

/// <summary>
/// Builds a table's filter block(s) from its keys. The full (one block per table) filter is the
/// one implementation today; partitioned filters will be another. Not thread-safe.
/// </summary>
internal interface IFilterBlockBuilder : IDisposable
{
    /// <summary>Metaindex key naming the filter block, e.g. "fullfilter.rocksdb.BuiltinBloomFilter".</summary>
    string MetaIndexKey { get; }

    /// <summary>Offers one table entry's user key (the builder decides what goes in: whole keys, prefixes).</summary>
    void Add(ReadOnlySpan<byte> userKey);

    /// <summary>True when nothing was added, so no filter block should be written.</summary>
    bool IsEmpty { get; }

    /// <summary>Keys that went into the filter (RocksDB's rocksdb.num.filter_entries).</summary>
    long EntriesAdded { get; }

    /// <summary>Writes the filter block contents.</summary>
    void Finish(IBufferWriter<byte> output);
}
