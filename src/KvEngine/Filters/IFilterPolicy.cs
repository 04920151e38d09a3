namespace KvEngine.Filters;

/// <summary>
/// Makes filter builders and readers for one filter format (RocksDB's FilterPolicy). The table
/// builder writes one filter block from a builder; the table reader wraps a filter block in a
/// reader. Implementations are immutable and thread-safe.
/// </summary>
internal interface IFilterPolicy
{
    /// <summary>Name used in the metaindex key, e.g. "rocksdb.BuiltinBloomFilter" (persisted).</summary>
    string Name { get; }

    IFilterBitsBuilder CreateBuilder();

    /// <summary>
    /// Wraps a whole filter block (bits plus its metadata trailer). The reader keeps a reference to
    /// <paramref name="filterBlock"/>, which must outlive it. Unknown or malformed contents give a
    /// reader that always answers "may match"; never throws for bad contents.
    /// </summary>
    IFilterBitsReader CreateReader(ReadOnlyMemory<byte> filterBlock);
}
