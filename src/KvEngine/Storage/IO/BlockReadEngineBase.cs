using Microsoft.Win32.SafeHandles;

namespace KvEngine.Storage.IO;

/// <summary>
/// What both engines share: argument checks, the operation pool and batch assembly. An engine
/// supplies <see cref="CreateOperation"/> and <see cref="Issue"/>.
/// <para>
/// The pool is a stack under its own lock holding every idle operation (as many as the most reads
/// ever in flight at once), so a read allocates nothing once the pool has warmed up. Thread-safe.
/// </para>
/// </summary>
internal abstract class BlockReadEngineBase<TOp> : IBlockReadEngine
    where TOp : BlockReadOperation
{
    private readonly object _poolLock = new();
    private TOp[] _free = new TOp[16];
    private int _freeCount;
    private volatile bool _disposed;

    public abstract BlockReadEngineKind Kind { get; }

    public virtual string? FallbackReason => null;

    protected bool IsDisposed => _disposed;

    public ValueTask<int> ReadAsync(SafeFileHandle file, Memory<byte> destination, long offset, CancellationToken cancellationToken = default)
    {
        TOp? op = Begin(file, destination, offset, cancellationToken, out ValueTask<int> immediate);
        if (op == null)
        {
            return immediate;
        }
        ValueTask<int> task = op.Task;
        Issue(op);
        return task;
    }

    public void ReadBatch(ReadOnlySpan<BlockRead> reads, Span<ValueTask<int>> results, CancellationToken cancellationToken = default)
    {
        if (results.Length < reads.Length)
        {
            throw new ArgumentException("There must be one result slot per read.", nameof(results));
        }
        TOp? first = null;
        TOp? last = null;
        for (int i = 0; i < reads.Length; i++)
        {
            TOp? op = Begin(reads[i].File, reads[i].Destination, reads[i].Offset, cancellationToken, out results[i]);
            if (op == null)
            {
                continue;
            }
            results[i] = op.Task;
            if (last == null)
            {
                first = op;
            }
            else
            {
                last.BatchNext = op;
            }
            last = op;
        }
        if (first != null)
        {
            Issue(first);
        }
    }

    /// <summary>
    /// Rents and starts an operation, its token registered; or null with the ValueTask to return
    /// at once (empty read, cancelled token, closed handle, disposed engine).
    /// </summary>
    private TOp? Begin(SafeFileHandle file, Memory<byte> destination, long offset, CancellationToken cancellationToken, out ValueTask<int> immediate)
    {
        ArgumentNullException.ThrowIfNull(file);
        ArgumentOutOfRangeException.ThrowIfNegative(offset);
        immediate = default;
        if (cancellationToken.IsCancellationRequested)
        {
            immediate = ValueTask.FromCanceled<int>(cancellationToken);
            return null;
        }
        if (_disposed)
        {
            immediate = ValueTask.FromException<int>(new ObjectDisposedException(GetType().Name));
            return null;
        }
        if (destination.IsEmpty)
        {
            return null; // default(ValueTask<int>) is a completed 0
        }
        TOp op = Rent();
        if (!op.TryStart(file, destination, offset, cancellationToken, out Exception? error))
        {
            Return(op);
            immediate = ValueTask.FromException<int>(error!);
            return null;
        }
        op.RegisterCancellation();
        return op;
    }

    /// <summary>Hands the started operations (linked by <see cref="BlockReadOperation.BatchNext"/>) to the device.</summary>
    protected abstract void Issue(TOp first);

    protected abstract TOp CreateOperation();

    private TOp Rent()
    {
        lock (_poolLock)
        {
            if (_freeCount > 0)
            {
                TOp op = _free[--_freeCount];
                _free[_freeCount] = null!;
                return op;
            }
        }
        return CreateOperation();
    }

    /// <summary>Idle operations in the pool.</summary>
    internal int IdleOperations
    {
        get
        {
            lock (_poolLock)
            {
                return _freeCount;
            }
        }
    }

    /// <summary>Test hook: called with each operation the pool takes back.</summary>
    internal Action<BlockReadOperation>? Returned { get; set; }

    /// <summary>Takes back an idle operation (called by the operation when its last reference goes).</summary>
    internal void Return(TOp op)
    {
        lock (_poolLock)
        {
            if (_freeCount == _free.Length)
            {
                Array.Resize(ref _free, _free.Length * 2);
            }
            _free[_freeCount++] = op;
        }
        Returned?.Invoke(op);
    }

    /// <summary>Marks the engine disposed (new reads fail with <see cref="ObjectDisposedException"/>); returns false if it already was.</summary>
    protected bool MarkDisposed()
    {
        lock (_poolLock)
        {
            if (_disposed)
            {
                return false;
            }
            _disposed = true;
            return true;
        }
    }

    public abstract void Dispose();
}
