using Microsoft.Win32.SafeHandles;

namespace KvEngine.Storage.IO;

/// <summary>
/// Asynchronous positional reads of files: io_uring where the kernel allows it
/// (<see cref="IoUringBlockReadEngine"/>), else pread on the thread pool
/// (<see cref="ThreadPoolBlockReadEngine"/>); <see cref="BlockReadEngines.Create"/> picks.
/// <para>
/// Contract of every read: pread's semantics (the count read, smaller than asked only at end of
/// file or on a short read the caller retries; 0 at or past the end). The device reads into a
/// buffer the operation owns (4096-aligned, so O_DIRECT handles work when the offset and length
/// are aligned too); the bytes are copied into the caller's destination just before the ValueTask
/// completes with success, and never afterwards: once the ValueTask has completed, whatever the
/// outcome, the engine no longer touches the destination.
/// </para>
/// <para>
/// Buffer ownership under cancellation (the invariant the engines keep): a cancelled token
/// completes the caller's ValueTask with <see cref="OperationCanceledException"/> at once, while
/// the kernel may still be writing into the operation's buffer; that buffer, and the file handle's
/// reference, stay with the operation until the kernel reports the read finished (its CQE, or the
/// pool thread's pread returning), and only then does the operation go back to the pool.
/// </para>
/// <para>
/// Errors: an errno from the read becomes an <see cref="IOException"/> whose HResult is the errno;
/// a closed handle or a disposed engine an <see cref="ObjectDisposedException"/>.
/// Thread-safe: any number of threads may read at once. Each ValueTask must be awaited (or its
/// result taken) exactly once: that returns the operation to the engine's pool.
/// </para>
/// </summary>
internal interface IBlockReadEngine : IDisposable
{
    /// <summary><see cref="BlockReadEngineKind.IoUring"/> or <see cref="BlockReadEngineKind.ThreadPool"/>.</summary>
    BlockReadEngineKind Kind { get; }

    /// <summary>Why this engine is the thread pool although io_uring was not ruled out by the caller (null otherwise).</summary>
    string? FallbackReason { get; }

    /// <summary>Reads <paramref name="destination"/>.Length bytes of <paramref name="file"/> at <paramref name="offset"/>.</summary>
    ValueTask<int> ReadAsync(SafeFileHandle file, Memory<byte> destination, long offset, CancellationToken cancellationToken = default);

    /// <summary>
    /// Starts every read of <paramref name="reads"/> at once (io_uring: one io_uring_enter for the
    /// batch); <paramref name="results"/>[i] completes with read i, each as
    /// <see cref="ReadAsync"/> would.
    /// </summary>
    void ReadBatch(ReadOnlySpan<BlockRead> reads, Span<ValueTask<int>> results, CancellationToken cancellationToken = default);
}
