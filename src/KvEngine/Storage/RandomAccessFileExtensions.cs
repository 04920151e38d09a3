namespace KvEngine.Storage;

/// <summary>Asynchronous reads of any <see cref="IRandomAccessFile"/>. Stateless and thread-safe.</summary>
internal static class RandomAccessFileExtensions
{
    /// <summary>
    /// <see cref="IAsyncRandomAccessFile.ReadAsync"/> when <paramref name="file"/> has it; else the
    /// synchronous <see cref="IRandomAccessFile.Read"/>, as an already completed ValueTask (its
    /// errors in the ValueTask, not thrown, as an asynchronous read reports them).
    /// </summary>
    public static ValueTask<int> ReadAsync(this IRandomAccessFile file, long offset, Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (file is IAsyncRandomAccessFile asynchronous)
        {
            return asynchronous.ReadAsync(offset, buffer, cancellationToken);
        }
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<int>(cancellationToken);
        }
        try
        {
            return new ValueTask<int>(file.Read(offset, buffer.Span));
        }
        catch (Exception e) when (e is IOException or ObjectDisposedException or KvException)
        {
            return ValueTask.FromException<int>(e);
        }
    }
}
