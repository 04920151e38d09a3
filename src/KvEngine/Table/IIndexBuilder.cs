namespace KvEngine.Table;

/// <summary>
/// Builds a table's index from the data blocks as they are cut. The single-level
/// <see cref="ShortenedIndexBuilder"/> is the one implementation today; a partitioned (two-level)
/// index will be another. Not thread-safe; one per table builder.
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

    /// <summary>The finished index block contents (uncompressed).</summary>
    ReadOnlySpan<byte> Finish();

    /// <summary>Uncompressed size of the index as finished (valid after <see cref="Finish"/>).</summary>
    int IndexSize { get; }

    /// <summary>Index keys are user keys (no data block boundary splits a user key).</summary>
    bool IndexKeyIsUserKey { get; }

    bool IndexValueIsDeltaEncoded { get; }

    IndexType IndexType { get; }
}
