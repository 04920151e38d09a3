using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading.Tasks.Sources;
using Microsoft.Win32.SafeHandles;

namespace KvEngine.Storage.IO;

/// <summary>
/// One pooled read: the <see cref="IValueTaskSource{TResult}"/> behind the caller's ValueTask, the
/// 4096-aligned buffer the device reads into (a pinned array on the pinned object heap, so its
/// address never moves and the GC, not a finalizer, frees it) and the file handle's reference.
/// <para>
/// Two references keep it out of the pool: the caller's (dropped when it takes the result) and
/// the kernel's (dropped by the engine once the read can no longer touch the buffer: its CQE was
/// reaped, the pool thread's pread returned, or it never reached the kernel). The last one
/// recycles it, so a cancelled read's buffer stays owned here until the kernel is done with it.
/// </para>
/// <para>
/// State: Pending, then exactly one of Completed (the engine's result or failure won: the bytes
/// are copied into the destination before the ValueTask completes) or Cancelled (the token won: the
/// ValueTask completes with <see cref="OperationCanceledException"/> and the destination is never
/// written). Continuations always run asynchronously, never on the thread that completes.
/// Thread-safe in that sense; everything else is set up by one thread before the read is issued.
/// </para>
/// </summary>
internal abstract unsafe class BlockReadOperation : IValueTaskSource<int>
{
    private const int Idle = 0;
    private const int Pending = 1;
    private const int Completed = 2;
    private const int Cancelled = 3;

    /// <summary>Alignment of the buffer: a page, which O_DIRECT accepts on every device.</summary>
    public const int Alignment = 4096;

    /// <summary>Buffers larger than this are not kept when the operation goes back to the pool.</summary>
    private const int MaxRetainedCapacity = 1 << 20;

    private static readonly Action<object?> s_onCancel = static s => ((BlockReadOperation)s!).Cancel();

    private ManualResetValueTaskSourceCore<int> _core;
    private int _state;
    private int _refs;
    private byte[]? _buffer;
    private byte* _aligned;
    private int _capacity;
    private Memory<byte> _destination;
    private SafeFileHandle? _file;
    private CancellationToken _cancellationToken;
    private CancellationTokenRegistration _registration;

    protected BlockReadOperation()
    {
        _core.RunContinuationsAsynchronously = true;
    }

    /// <summary>The file handle (valid while the operation holds its reference).</summary>
    public SafeFileHandle? File => _file;

    /// <summary>The file descriptor on Unix (the handle's value).</summary>
    public int Fd { get; private set; }

    public long Offset { get; private set; }

    public int Length { get; private set; }

    /// <summary>The aligned buffer the device reads into; <see cref="Length"/> bytes at least.</summary>
    public byte* Buffer => _aligned;

    /// <summary>The next operation of a batch being issued (set and read by the issuing thread only).</summary>
    public BlockReadOperation? BatchNext { get; set; }

    public bool IsCancelled => Volatile.Read(ref _state) == Cancelled;

    /// <summary>The caller's ValueTask for this use of the operation.</summary>
    public ValueTask<int> Task => new(this, _core.Version);

    /// <summary>
    /// Prepares a read and takes a reference on <paramref name="file"/>; returns false with the
    /// exception for the caller when the handle is already closed (the operation is then unused).
    /// </summary>
    public bool TryStart(SafeFileHandle file, Memory<byte> destination, long offset, CancellationToken cancellationToken, out Exception? error)
    {
        bool added = false;
        try
        {
            file.DangerousAddRef(ref added);
        }
        catch (ObjectDisposedException e)
        {
            error = e;
            return false;
        }
        error = null;
        _file = file;
        Fd = OperatingSystem.IsWindows() ? -1 : (int)file.DangerousGetHandle();
        _destination = destination;
        Offset = offset;
        Length = destination.Length;
        _cancellationToken = cancellationToken;
        EnsureCapacity(destination.Length);
        BatchNext = null;
        _refs = 2;
        Volatile.Write(ref _state, Pending);
        OnStart();
        return true;
    }

    /// <summary>Registers the token (after <see cref="TryStart"/>, before the read is issued); a token already cancelled cancels at once.</summary>
    public void RegisterCancellation()
    {
        if (_cancellationToken.CanBeCanceled)
        {
            _registration = _cancellationToken.UnsafeRegister(s_onCancel, this);
        }
    }

    /// <summary>
    /// Claims the completion for the engine's result: false when cancellation won (the result is
    /// then dropped). The engine claims, then releases the kernel's reference, then calls
    /// <see cref="Deliver(int)"/>: so when the caller sees the result, its own reference is the last and
    /// taking the result returns the operation to the pool before the caller's next read.
    /// </summary>
    public bool TryClaimCompletion() => Interlocked.CompareExchange(ref _state, Completed, Pending) == Pending;

    /// <summary>After a successful <see cref="TryClaimCompletion"/>: the result (bytes read, or -errno) reaches the caller.</summary>
    public void Deliver(int result)
    {
        if (result < 0)
        {
            _core.SetException(BlockReadErrors.Read(-result, Offset, Length));
            return;
        }
        new ReadOnlySpan<byte>(_aligned, result).CopyTo(_destination.Span);
        _core.SetResult(result);
    }

    /// <summary>The read fails with <paramref name="error"/> unless it already completed or was cancelled.</summary>
    public void Fail(Exception error)
    {
        if (TryClaimCompletion())
        {
            Deliver(error);
        }
    }

    /// <summary>After a successful <see cref="TryClaimCompletion"/>: the read fails with <paramref name="error"/>.</summary>
    public void Deliver(Exception error) => _core.SetException(error);

    /// <summary>The kernel (or pool thread) is done with the buffer and the handle: drops its reference.</summary>
    public void ReleaseKernel()
    {
        _file!.DangerousRelease();
        Release();
    }

    private void Cancel()
    {
        if (Interlocked.CompareExchange(ref _state, Cancelled, Pending) != Pending)
        {
            return;
        }
        _core.SetException(new OperationCanceledException(_cancellationToken));
        OnCancelled();
    }

    /// <summary>Called when a new use starts (under no lock).</summary>
    protected virtual void OnStart()
    {
    }

    /// <summary>The token won: the engine withdraws the read from the kernel if it can (the caller already has its exception).</summary>
    protected abstract void OnCancelled();

    /// <summary>Both references are gone: the engine takes the operation back.</summary>
    protected abstract void ReturnToPool();

    private void Release()
    {
        if (Interlocked.Decrement(ref _refs) != 0)
        {
            return;
        }
        _registration.Dispose(); // waits for a cancellation callback still running on another thread
        _registration = default;
        _cancellationToken = default;
        _destination = default;
        _file = null;
        BatchNext = null;
        if (_capacity > MaxRetainedCapacity)
        {
            _buffer = null;
            _aligned = null;
            _capacity = 0;
        }
        _core.Reset();
        Volatile.Write(ref _state, Idle);
        ReturnToPool();
    }

    private void EnsureCapacity(int length)
    {
        if (length <= _capacity)
        {
            return;
        }
        int capacity = (int)Math.Min(((long)length + Alignment - 1) & ~(long)(Alignment - 1), Array.MaxLength - Alignment);
        capacity = Math.Max(capacity, Alignment);
        _buffer = GC.AllocateUninitializedArray<byte>(capacity + Alignment, pinned: true);
        nint start = (nint)Unsafe.AsPointer(ref MemoryMarshal.GetArrayDataReference(_buffer));
        _aligned = (byte*)((start + Alignment - 1) & ~(nint)(Alignment - 1));
        _capacity = capacity;
    }

    public int GetResult(short token)
    {
        if (token != _core.Version)
        {
            throw new InvalidOperationException("A block read's ValueTask was awaited twice or after it was recycled.");
        }
        try
        {
            return _core.GetResult(token);
        }
        finally
        {
            Release();
        }
    }

    public ValueTaskSourceStatus GetStatus(short token) => _core.GetStatus(token);

    public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _core.OnCompleted(continuation, state, token, flags);
}
