namespace KvEngine.Storage.IO;

/// <summary>
/// The fallback engine: each read is a pread on a thread-pool thread (RandomAccess.Read on
/// Windows), for kernels without io_uring, sandboxes that refuse it, and when forced
/// (KVENGINE_IO_ENGINE=threadpool). It blocks a pool thread per read in flight, which io_uring does
/// not. A cancelled read that a thread has not picked up yet is never issued; one already in pread
/// finishes into the operation's own buffer (the caller has its exception already).
/// <para>
/// Dispose makes new reads fail with <see cref="ObjectDisposedException"/>; reads already queued
/// complete normally (they need nothing the engine owns). Thread-safe.
/// </para>
/// </summary>
internal sealed class ThreadPoolBlockReadEngine : BlockReadEngineBase<ThreadPoolBlockReadEngine.Operation>
{
    public ThreadPoolBlockReadEngine(string? fallbackReason = null)
    {
        FallbackReason = fallbackReason;
    }

    public override BlockReadEngineKind Kind => BlockReadEngineKind.ThreadPool;

    /// <summary>Test hook: runs on the pool thread when a read has started, just before its pread (a test holds a read "in flight" with it).</summary>
    internal Action? BeforeRead { get; set; }

    public override string? FallbackReason { get; }

    protected override Operation CreateOperation() => new(this);

    protected override void Issue(Operation first)
    {
        for (BlockReadOperation? op = first; op != null;)
        {
            BlockReadOperation? next = op.BatchNext;
            ThreadPool.UnsafeQueueUserWorkItem((Operation)op, preferLocal: false);
            op = next;
        }
    }

    public override void Dispose() => MarkDisposed();

    /// <summary>A read run as a thread-pool work item.</summary>
    internal sealed unsafe class Operation : BlockReadOperation, IThreadPoolWorkItem
    {
        private readonly ThreadPoolBlockReadEngine _engine;

        public Operation(ThreadPoolBlockReadEngine engine)
        {
            _engine = engine;
        }

        public void Execute()
        {
            if (IsCancelled)
            {
                ReleaseKernel();
                return;
            }
            _engine.BeforeRead?.Invoke();
            if (OperatingSystem.IsWindows())
            {
                ReadWithRandomAccess();
                return;
            }
            int result = Pread();
            bool won = TryClaimCompletion();
            ReleaseKernel();
            if (won)
            {
                Deliver(result);
            }
        }

        private int Pread()
        {
            while (true)
            {
                nint n = IoUringNative.Pread(Fd, Buffer, (nuint)Length, Offset);
                if (n >= 0)
                {
                    return (int)n;
                }
                int errno = System.Runtime.InteropServices.Marshal.GetLastPInvokeError();
                if (errno != IoUringNative.EIntr)
                {
                    return -errno;
                }
            }
        }

        private void ReadWithRandomAccess()
        {
            try
            {
                int n = RandomAccess.Read(File!, new Span<byte>(Buffer, Length), Offset);
                bool won = TryClaimCompletion();
                ReleaseKernel();
                if (won)
                {
                    Deliver(n);
                }
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException or NotSupportedException)
            {
                Fail(e);
                ReleaseKernel();
            }
        }

        protected override void OnCancelled()
        {
        }

        protected override void ReturnToPool() => _engine.Return(this);
    }
}
