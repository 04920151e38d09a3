namespace KvEngine.Storage;

/// <summary>Positional reads of an immutable file. Thread-safe: concurrent reads are allowed.</summary>
internal interface IRandomAccessFile : IDisposable
{
    /// <summary>
    /// Reads up to <paramref name="buffer"/>.Length bytes at <paramref name="offset"/>; returns the
    /// count read, which is smaller only at end of file.
    /// </summary>
    int Read(long offset, Span<byte> buffer);

    long Length { get; }
}
