using KvEngine.Storage.IO;
using Microsoft.Win32.SafeHandles;

namespace KvEngine.Tests.Db;

/// <summary>
/// A block-read engine for tests: counts the reads and batches it is given, and while
/// <see cref="Holding"/> keeps each read from reaching the real engine until <see cref="Release"/>
/// (deterministic: <see cref="FirstHeld"/> completes inside the call that submits the first held
/// read, so a test sees it completed as soon as the read was issued). A held read
/// honours its cancellation token. Thread-safe.
/// </summary>
internal sealed class HoldingBlockReadEngine : IBlockReadEngine
{
    private readonly IBlockReadEngine _inner;
    private readonly TaskCompletionSource _release = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _firstHeld = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _batches;
    private int _singleReads;
    private int _reads;

    public HoldingBlockReadEngine(IBlockReadEngine inner)
    {
        _inner = inner;
    }

    public bool Holding { get; set; }

    public BlockReadEngineKind Kind => _inner.Kind;

    public string? FallbackReason => _inner.FallbackReason;

    /// <summary>Calls of <see cref="ReadBatch"/>.</summary>
    public int Batches => Volatile.Read(ref _batches);

    /// <summary>Calls of <see cref="ReadAsync"/>.</summary>
    public int SingleReads => Volatile.Read(ref _singleReads);

    /// <summary>Reads in all (batched or single).</summary>
    public int Reads => Volatile.Read(ref _reads);

    /// <summary>Completes when a read is first held (synchronously, inside the engine call that submits it).</summary>
    public Task FirstHeld => _firstHeld.Task;

    public void Release() => _release.TrySetResult();

    public ValueTask<int> ReadAsync(SafeFileHandle file, Memory<byte> destination, long offset, CancellationToken cancellationToken = default)
    {
        Interlocked.Increment(ref _singleReads);
        Interlocked.Increment(ref _reads);
        return Holding ? HeldAsync(new BlockRead(file, destination, offset), cancellationToken) : _inner.ReadAsync(file, destination, offset, cancellationToken);
    }

    public void ReadBatch(ReadOnlySpan<BlockRead> reads, Span<ValueTask<int>> results, CancellationToken cancellationToken = default)
    {
        Interlocked.Increment(ref _batches);
        Interlocked.Add(ref _reads, reads.Length);
        if (!Holding)
        {
            _inner.ReadBatch(reads, results, cancellationToken);
            return;
        }
        for (int i = 0; i < reads.Length; i++)
        {
            results[i] = HeldAsync(reads[i], cancellationToken);
        }
    }

    private async ValueTask<int> HeldAsync(BlockRead read, CancellationToken cancellationToken)
    {
        _firstHeld.TrySetResult();
        await _release.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
        return await _inner.ReadAsync(read.File, read.Destination, read.Offset, cancellationToken).ConfigureAwait(false);
    }

    public void Dispose() => _inner.Dispose();
}
