using KvEngine.Compression;

namespace KvEngine.Table;

/// <summary>
/// Builds a table's index from the data blocks as they are cut: the single-level
/// <see cref="ShortenedIndexBuilder"/> or the two-level <see cref="PartitionedIndexBuilder"/>.
/// Not thread-safe; one per table builder.
/// </summary>
internal interface IIndexBuilder : IDisposable
{
    /// <summary>Every key added to the table, in order (for index kinds that need them).</summary>
    void OnKeyAdded(ReadOnlySpan<byte> internalKey);

    /// <summary>
    /// Records a finished data block. <paramref name="firstKeyInNextBlock"/> is empty for the last
    /// block (<paramref name="hasNextBlock"/> false).
    /// </summary>
    void AddIndexEntry(ReadOnlySpan<byte> lastKeyInBlock, bool hasNextBlock, ReadOnlySpan<byte> firstKeyInNextBlock, BlockHandle handle);

    /// <summary>
    /// Writes the index block(s) through <paramref name="writer"/>, compressed with
    /// <paramref name="compression"/>, and returns the handle the footer points at (the index
    /// block, or the top-level index of a partitioned index).
    /// </summary>
    BlockHandle Finish(ITableBlockWriter writer, CompressionType compression);

    /// <summary>
    /// Uncompressed size of the index as finished (every partition plus the top level), valid
    /// after <see cref="Finish"/>.
    /// </summary>
    int IndexSize { get; }

    /// <summary>Index keys are user keys (no data block boundary splits a user key).</summary>
    bool IndexKeyIsUserKey { get; }

    bool IndexValueIsDeltaEncoded { get; }

    IndexType IndexType { get; }

    /// <summary>Index partitions written (0 for a single-level index); valid after <see cref="Finish"/>.</summary>
    int NumPartitions { get; }

    /// <summary>Uncompressed size of the top-level index (0 for a single-level index); valid after <see cref="Finish"/>.</summary>
    int TopLevelIndexSize { get; }
}
