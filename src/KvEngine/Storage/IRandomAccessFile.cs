namespace KvEngine.Storage;

/// <summary>Positional reads of an immutable file. Thread-safe: concurrent reads are allowed.</summary>
internal interface IRandomAccessFile : IDisposable
{
    /// <summary>
    /// Reads up to <paramref name="buffer"/>.Length bytes at <paramref name="offset"/>; returns the
    /// count read, which is smaller only at end of file. Any offset and length are served.
    /// </summary>
    int Read(long offset, Span<byte> buffer);

    long Length { get; }

    /// <summary>
    /// The alignment of offset, length and buffer address at which <see cref="Read"/> reads without
    /// an intermediate copy: 1 for a buffered file, <see cref="DirectIO.Alignment"/> for one opened
    /// with direct I/O (<see cref="LocalDirectRandomAccessFile"/>).
    /// </summary>
    int Alignment => 1;
}
