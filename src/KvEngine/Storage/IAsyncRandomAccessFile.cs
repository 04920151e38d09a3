namespace KvEngine.Storage;

/// <summary>
/// A <see cref="IRandomAccessFile"/> that can also read without blocking a thread (the local file
/// through the process's block-read engine, io_uring where the kernel allows it). Optional: callers
/// go through <see cref="RandomAccessFileExtensions.ReadAsync"/>, which completes synchronously for
/// files that do not implement it (the in-memory and fault-injection ones). Thread-safe like
/// <see cref="IRandomAccessFile"/>.
/// </summary>
internal interface IAsyncRandomAccessFile : IRandomAccessFile
{
    /// <summary>
    /// Reads up to <paramref name="buffer"/>.Length bytes at <paramref name="offset"/>; completes
    /// with the count read, smaller only at end of file. A cancelled token completes it with
    /// <see cref="OperationCanceledException"/> at once; <paramref name="buffer"/> is not written
    /// after the ValueTask has completed, whatever the outcome.
    /// </summary>
    ValueTask<int> ReadAsync(long offset, Memory<byte> buffer, CancellationToken cancellationToken = default);
}
