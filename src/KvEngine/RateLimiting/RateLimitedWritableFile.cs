using KvEngine.Storage;

namespace KvEngine.RateLimiting;

/// <summary>
/// A writable file whose appends are charged to a <see cref="KvRateLimiter"/> before they reach
/// the file (RocksDB's WritableFileWriter with a rate limiter and an I/O priority): an append
/// larger than the limiter's single burst is written in pieces of at most that size, each once
/// granted. A wait cancelled by <see cref="CancellationToken"/> (the database closing) throws
/// <see cref="OperationCanceledException"/> with the pieces granted so far written. Flush, Sync
/// and Dispose pass through uncharged. Owns the inner file. Not thread-safe, like the file.
/// </summary>
internal sealed class RateLimitedWritableFile : IWritableFile
{
    private readonly IWritableFile _inner;
    private readonly KvRateLimiter _limiter;
    private readonly KvIOPriority _priority;
    private readonly CancellationToken _cancellation;

    private RateLimitedWritableFile(IWritableFile inner, KvRateLimiter limiter, KvIOPriority priority, CancellationToken cancellation)
    {
        _inner = inner;
        _limiter = limiter;
        _priority = priority;
        _cancellation = cancellation;
    }

    public long Size => _inner.Size;

    /// <summary><paramref name="file"/> itself when <paramref name="limit"/> is null (no cost), else it wrapped.</summary>
    public static IWritableFile Wrap(IWritableFile file, BackgroundWriteLimit? limit, KvIOPriority priority) =>
        limit == null ? file : new RateLimitedWritableFile(file, limit.Limiter, priority, limit.Cancellation);

    public void Append(ReadOnlySpan<byte> data)
    {
        while (data.Length > 0)
        {
            int granted = (int)_limiter.RequestToken(data.Length, _priority, _cancellation);
            _inner.Append(data[..granted]);
            data = data[granted..];
        }
    }

    public void Flush() => _inner.Flush();

    public void Sync() => _inner.Sync();

    public void Dispose() => _inner.Dispose();
}
