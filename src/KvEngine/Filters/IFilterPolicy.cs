using KvEngine.Memory;

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
    /// Keys a filter of at most <paramref name="bytes"/> bytes holds at the configured density
    /// (RocksDB's FilterBitsBuilder::ApproximateNumEntries; cuts filter partitions).
    /// </summary>
    long ApproximateNumEntries(long bytes);

    /// <summary>
    /// A builder that, when <paramref name="optimizeForMemory"/> and the format supports it, sizes
    /// filters to fill allocator size classes (RocksDB's optimize_filters_for_memory). The default
    /// ignores the request.
    /// </summary>
    IFilterBitsBuilder CreateBuilder(bool optimizeForMemory) => CreateBuilder();

    /// <summary>
    /// Wraps a whole filter block (bits plus its metadata trailer). The reader keeps a reference to
    /// <paramref name="filterBlock"/>, which must outlive it. Unknown or malformed contents give a
    /// reader that always answers "may match"; never throws for bad contents.
    /// </summary>
    IFilterBitsReader CreateReader(ReadOnlyMemory<byte> filterBlock);

    /// <summary>
    /// Copies a whole filter block into memory the returned reader owns (native memory from
    /// <paramref name="allocator"/> where the format allows; the default copies to the managed heap),
    /// so <paramref name="filterBlock"/> may be reused at once. A reader that is
    /// <see cref="IDisposable"/> must be disposed by its owner.
    /// </summary>
    IFilterBitsReader LoadReader(ReadOnlySpan<byte> filterBlock, NativeAllocator allocator) => CreateReader(filterBlock.ToArray());
}
