namespace KvEngine.Iterators;

/// <summary>
/// Opens the iterator of one file of a sorted run for <see cref="LevelIterator"/>. The caller owns
/// (and disposes) each iterator returned. Implementations may throw
/// <see cref="KvCorruptionException"/> (or an I/O exception) when the file cannot be opened.
/// </summary>
internal interface ITableIteratorFactory
{
    /// <summary>Opens an unpositioned iterator over the file at <paramref name="fileIndex"/> of the run.</summary>
    InternalIterator Open(int fileIndex);

    /// <summary>False only when the file's filter proves it holds no entry for <paramref name="userKey"/>; true without a filter.</summary>
    bool KeyMayMatch(int fileIndex, ReadOnlySpan<byte> userKey) => true;
}
