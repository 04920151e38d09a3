namespace KvEngine.Storage.IO;

/// <summary>
/// The io_uring engine: reads are IORING_OP_READ SQEs (fd, the operation's aligned buffer, offset)
/// and a dedicated reaper thread blocks in io_uring_enter(min_complete = 1, GETEVENTS), completing
/// each read's pooled ValueTask source from its CQE; continuations run on the thread pool, never
/// inline on the reaper.
/// <para>
/// Submission from many threads takes one lock around SQE acquisition and tail publishing; a batch
/// takes it once. The io_uring_enter that submits is coalesced with the reaper's: while the reaper
/// is awake (reaping, or about to submit and wait), a caller only fills SQEs and the reaper submits
/// them all with one io_uring_enter before it next waits; only while the reaper is blocked in the
/// kernel does the caller enter itself. The reaper decides to sleep under the lock, after
/// submitting everything published, so no SQE waits for a reaper that is asleep. At most
/// <see cref="IoUring.SqEntries"/> requests are in the kernel at a time (reads and cancels, with
/// one SQE kept for Dispose), and the CQ ring holds twice that, so the SQ never fills and the CQ never
/// overflows; reads beyond the limit wait in a FIFO backlog that the reaper submits as CQEs free
/// room, so no caller blocks on a full ring.
/// </para>
/// <para>
/// Cancellation: a read still in the backlog is withdrawn; one in the kernel gets an
/// IORING_OP_ASYNC_CANCEL naming its user_data (index and generation of the operation, so a late
/// cancel cannot hit the operation's next use). Either way the caller's ValueTask has already
/// completed with <see cref="OperationCanceledException"/>, and the operation keeps its buffer
/// until the read's own CQE arrives (see <see cref="BlockReadOperation"/>).
/// </para>
/// <para>
/// Dispose: new reads fail with <see cref="ObjectDisposedException"/>, backlogged ones too; reads
/// in the kernel get one IORING_OP_ASYNC_CANCEL (ALL | ANY, on an SQE kept free for it): those
/// the kernel withdraws fail with <see cref="ObjectDisposedException"/>, the others complete with
/// their results; the reaper exits once nothing is in flight; then the rings are unmapped and the
/// ring fd closed. Thread-safe.
/// </para>
/// </summary>
internal sealed unsafe class IoUringBlockReadEngine : BlockReadEngineBase<IoUringBlockReadEngine.Operation>
{
    private const ulong CancelFlag = 1UL << 63;
    private const ulong WakeUserData = 1UL << 62;
    private const uint CancelAll = 1u << 0; // IORING_ASYNC_CANCEL_ALL
    private const uint CancelAny = 1u << 2; // IORING_ASYNC_CANCEL_ANY
    private const int ECanceled = 125;
    private const int DroppedResult = int.MinValue;     // reaper scratch: cancellation had won
    private const int DisposedResult = int.MinValue + 1; // reaper scratch: withdrawn by Dispose

    private readonly IoUring _ring;
    private readonly object _lock = new();
    private readonly int _capacity;
    private readonly Thread _reaper;

    // Reaper-owned scratch.
    private readonly ulong[] _reapUserData;
    private readonly int[] _reapResults;
    private readonly Operation?[] _reapOps;

    // Under _lock.
    private int _inFlight;
    private Operation? _backlogHead;
    private Operation? _backlogTail;
    private Operation? _cancelHead;
    private volatile bool _closing;
    private bool _reaperAwake = true; // the reaper will submit what is published before it waits
    private int _opCount;
    private long _backlogged;

    // Every operation ever created, by index (the low half of its user_data); replaced, never
    // shrunk, under _lock; the reaper reads it without the lock (an operation is registered before
    // its first submission).
    private Operation[] _ops = new Operation[16];

    private IoUringBlockReadEngine(IoUring ring)
    {
        _ring = ring;
        _capacity = (int)ring.SqEntries - 1; // one SQE kept for Dispose's cancel-all
        _reapUserData = new ulong[ring.CqEntries];
        _reapResults = new int[ring.CqEntries];
        _reapOps = new Operation?[ring.CqEntries];
        _reaper = new Thread(ReapLoop) { IsBackground = true, Name = "KvEngine io_uring reaper" };
        _reaper.Start();
    }

    /// <summary>Sets up a ring of <paramref name="entries"/>; returns 0 and the engine, or the errno io_uring_setup or mmap refused it with.</summary>
    public static int TryCreate(uint entries, out IoUringBlockReadEngine? engine)
    {
        engine = null;
        int errno = IoUring.TryCreate(entries, out IoUring? ring);
        if (errno != 0)
        {
            return errno;
        }
        engine = new IoUringBlockReadEngine(ring!);
        return 0;
    }

    public override BlockReadEngineKind Kind => BlockReadEngineKind.IoUring;

    /// <summary>Most reads and cancels in the kernel at once (the SQ ring's size less the one Dispose keeps).</summary>
    public int Capacity => _capacity;

    /// <summary>Reads that have waited in the backlog for room in the ring, since creation.</summary>
    internal long BackloggedReads => Interlocked.Read(ref _backlogged);

    protected override Operation CreateOperation()
    {
        lock (_lock)
        {
            if (_opCount == _ops.Length)
            {
                Operation[] grown = new Operation[_ops.Length * 2];
                Array.Copy(_ops, grown, _ops.Length);
                Volatile.Write(ref _ops, grown);
            }
            var op = new Operation(this, _opCount);
            _ops[_opCount++] = op;
            return op;
        }
    }

    protected override void Issue(Operation first)
    {
        Operation? refused = null;
        lock (_lock)
        {
            for (Operation? op = first; op != null;)
            {
                var next = (Operation?)op.BatchNext;
                if (op.IsCancelled || _closing)
                {
                    op.BatchNext = refused;
                    refused = op;
                }
                else if (_backlogHead != null || _inFlight == _capacity || !TryPrepareRead(op))
                {
                    AppendBacklog(op);
                }
                op = next;
            }
            if (!_reaperAwake)
            {
                SubmitLocked();
            }
        }
        ReleaseRefused(refused);
    }

    /// <summary>Operations that never reached the kernel: they fail (unless cancelled) and drop the kernel's reference.</summary>
    private static void ReleaseRefused(Operation? refused, Exception? error = null)
    {
        while (refused != null)
        {
            var next = (Operation?)refused.BatchNext;
            refused.Fail(error ?? new ObjectDisposedException(nameof(IoUringBlockReadEngine)));
            refused.ReleaseKernel();
            refused = next;
        }
    }

    private bool TryPrepareRead(Operation op)
    {
        IoUringSqe* sqe = _ring.TryGetSqe();
        if (sqe == null)
        {
            return false;
        }
        sqe->Opcode = IoUringNative.OpRead;
        sqe->Fd = op.Fd;
        sqe->Offset = (ulong)op.Offset;
        sqe->Address = (ulong)op.Buffer;
        sqe->Length = (uint)op.Length;
        sqe->UserData = op.UserData;
        op.Where = Operation.InKernel;
        _inFlight++;
        return true;
    }

    private bool TryPrepareCancel(Operation op)
    {
        IoUringSqe* sqe = _ring.TryGetSqe();
        if (sqe == null)
        {
            return false;
        }
        sqe->Opcode = IoUringNative.OpAsyncCancel;
        sqe->Fd = -1;
        sqe->Address = op.UserData;
        sqe->UserData = CancelFlag | op.UserData;
        _inFlight++;
        return true;
    }

    private void AppendBacklog(Operation op)
    {
        _backlogged++;
        op.Where = Operation.InBacklog;
        op.BacklogNext = null;
        op.BacklogPrevious = _backlogTail;
        if (_backlogTail == null)
        {
            _backlogHead = op;
        }
        else
        {
            _backlogTail.BacklogNext = op;
        }
        _backlogTail = op;
    }

    private void UnlinkBacklog(Operation op)
    {
        if (op.BacklogPrevious == null)
        {
            _backlogHead = op.BacklogNext;
        }
        else
        {
            op.BacklogPrevious.BacklogNext = op.BacklogNext;
        }
        if (op.BacklogNext == null)
        {
            _backlogTail = op.BacklogPrevious;
        }
        else
        {
            op.BacklogNext.BacklogPrevious = op.BacklogPrevious;
        }
        op.BacklogNext = op.BacklogPrevious = null;
        op.Where = Operation.Nowhere;
    }

    private void UnlinkCancel(Operation op)
    {
        if (_cancelHead == op)
        {
            _cancelHead = op.CancelNext;
        }
        else
        {
            for (Operation? p = _cancelHead; p != null; p = p.CancelNext)
            {
                if (p.CancelNext == op)
                {
                    p.CancelNext = op.CancelNext;
                    break;
                }
            }
        }
        op.CancelNext = null;
        op.CancelQueued = false;
    }

    /// <summary>Moves queued cancels, then backlogged reads, into the room the ring has.</summary>
    private void FillLocked()
    {
        while (_cancelHead != null && _inFlight < _capacity)
        {
            Operation op = _cancelHead;
            if (!TryPrepareCancel(op))
            {
                break;
            }
            UnlinkCancel(op);
        }
        while (_backlogHead != null && _inFlight < _capacity)
        {
            Operation op = _backlogHead;
            UnlinkBacklog(op);
            if (!TryPrepareRead(op))
            {
                AppendBacklog(op); // cannot happen while _inFlight bounds the SQEs handed out
                break;
            }
        }
    }

    /// <summary>
    /// Submits what the SQ holds. EAGAIN/EBUSY (the kernel short of resources) leave the SQEs in
    /// the ring for the next submission; while nothing else is in the kernel to bring the reaper
    /// back, this retries until the kernel takes them.
    /// </summary>
    private void SubmitLocked()
    {
        while (_ring.Unsubmitted > 0)
        {
            int r = _ring.Submit();
            if (r >= 0)
            {
                continue;
            }
            if (r != -IoUringNative.EAgain && r != -IoUringNative.EBusy)
            {
                throw new IOException("io_uring_enter failed to submit: " + BlockReadErrors.Describe(-r), -r);
            }
            if (_inFlight > (int)_ring.Unsubmitted)
            {
                return; // a CQE is coming; the reaper submits again after it
            }
            Thread.Yield();
        }
    }

    /// <summary>The token won for <paramref name="op"/>: withdraw it from the backlog, or ask the kernel to cancel it.</summary>
    private void Cancel(Operation op)
    {
        bool release = false;
        lock (_lock)
        {
            if (op.Where == Operation.InBacklog)
            {
                UnlinkBacklog(op);
                release = true;
            }
            else if (op.Where == Operation.InKernel && !op.CancelQueued)
            {
                if (_inFlight < _capacity && TryPrepareCancel(op))
                {
                    SubmitLocked();
                }
                else
                {
                    op.CancelQueued = true;
                    op.CancelNext = _cancelHead;
                    _cancelHead = op;
                }
            }
        }
        if (release)
        {
            op.ReleaseKernel();
        }
    }

    private void ReapLoop()
    {
        while (true)
        {
            int n = _ring.Reap(_reapUserData, _reapResults);
            Operation[] ops = Volatile.Read(ref _ops);
            for (int i = 0; i < n; i++)
            {
                ulong userData = _reapUserData[i];
                Operation? op = null;
                if ((userData & (CancelFlag | WakeUserData)) == 0)
                {
                    op = ops[(int)(uint)userData];
                    if (!op.TryClaimCompletion())
                    {
                        _reapResults[i] = DroppedResult; // cancellation won: nothing to deliver
                    }
                    else if (_reapResults[i] == -ECanceled && _closing)
                    {
                        _reapResults[i] = DisposedResult;
                    }
                }
                _reapOps[i] = op;
            }
            bool exit;
            string? broken = null;
            lock (_lock)
            {
                _inFlight -= n;
                for (int i = 0; i < n; i++)
                {
                    Operation? op = _reapOps[i];
                    if (op == null)
                    {
                        continue;
                    }
                    op.Where = Operation.Nowhere;
                    if (op.CancelQueued)
                    {
                        UnlinkCancel(op);
                    }
                }
                FillLocked();
                try
                {
                    SubmitLocked();
                }
                catch (IOException e)
                {
                    broken = e.Message; // an io_uring_enter error other than EAGAIN/EBUSY: see FailStuck
                }
                exit = _closing && _inFlight == 0;
            }
            for (int i = 0; i < n; i++)
            {
                Operation? op = _reapOps[i];
                if (op == null)
                {
                    continue;
                }
                _reapOps[i] = null;
                int result = _reapResults[i];
                op.ReleaseKernel(); // the caller's reference keeps it out of the pool until it takes the result
                if (result == DisposedResult)
                {
                    op.Deliver(new ObjectDisposedException(nameof(IoUringBlockReadEngine)));
                }
                else if (result != DroppedResult)
                {
                    op.Deliver(result); // copies into the destination, then completes (continuation queued)
                }
            }
            if (broken != null)
            {
                FailStuck(broken);
                return;
            }
            if (exit)
            {
                return;
            }
            if (n == 0)
            {
                lock (_lock)
                {
                    try
                    {
                        SubmitLocked(); // what callers published while this thread was awake
                    }
                    catch (IOException e)
                    {
                        broken = e.Message;
                    }
                    _reaperAwake = broken != null;
                }
                if (broken != null)
                {
                    FailStuck(broken);
                    return;
                }
                int r = _ring.WaitForCompletion();
                lock (_lock)
                {
                    _reaperAwake = true;
                }
                if (r < 0 && r != -IoUringNative.EAgain && r != -IoUringNative.EBusy)
                {
                    // Only a broken ring fails this way; keep the buffers of what is in flight
                    // owned (the kernel may still write them) and stop serving.
                    FailStuck("io_uring_enter failed to wait: " + BlockReadErrors.Describe(-r));
                    return;
                }
            }
        }
    }

    /// <summary>
    /// The ring stopped working: every read still pending fails with an IOException. Their
    /// operations are never recycled (the kernel may still own their buffers) and stay reachable
    /// from <see cref="_ops"/>, which the engine keeps.
    /// </summary>
    private void FailStuck(string why)
    {
        var error = new IOException("The io_uring engine stopped: " + why);
        Operation? refused;
        lock (_lock)
        {
            refused = CloseBacklog();
        }
        Operation[] ops = Volatile.Read(ref _ops);
        for (int i = 0; i < ops.Length && ops[i] != null; i++)
        {
            ops[i].Fail(error); // those in the kernel: failed, never recycled
        }
        ReleaseRefused(refused, error);
    }

    /// <summary>Under <see cref="_lock"/>: marks the engine closing and unlinks the backlog, returned as a BatchNext chain (newest first).</summary>
    private Operation? CloseBacklog()
    {
        System.Diagnostics.Debug.Assert(Monitor.IsEntered(_lock));
        _closing = true;
        Operation? refused = null;
        while (_backlogHead != null)
        {
            Operation op = _backlogHead;
            UnlinkBacklog(op);
            op.BatchNext = refused;
            refused = op;
        }
        return refused;
    }

    public override void Dispose()
    {
        if (!MarkDisposed())
        {
            return;
        }
        Operation? refused;
        lock (_lock)
        {
            refused = CloseBacklog();
            // The SQE kept back for this: cancel every read still in the kernel (a read that
            // cannot finish by itself, as on a pipe, must not hang Dispose); its CQE also wakes
            // the reaper when nothing else is in flight.
            IoUringSqe* sqe = _ring.TryGetSqe();
            sqe->Opcode = IoUringNative.OpAsyncCancel;
            sqe->Fd = -1;
            sqe->OpFlags = CancelAll | CancelAny;
            sqe->UserData = WakeUserData;
            _inFlight++;
            SubmitLocked();
        }
        ReleaseRefused(refused);
        if (Thread.CurrentThread != _reaper)
        {
            _reaper.Join();
            _ring.Dispose();
        }
    }

    /// <summary>A read on the ring, with its place (nowhere, backlog, kernel) guarded by the engine's lock.</summary>
    internal sealed class Operation : BlockReadOperation
    {
        public const int Nowhere = 0;
        public const int InBacklog = 1;
        public const int InKernel = 2;

        private readonly IoUringBlockReadEngine _engine;
        private readonly int _index;
        private uint _generation;

        public Operation(IoUringBlockReadEngine engine, int index)
        {
            _engine = engine;
            _index = index;
        }

        /// <summary>Index and generation: unique to this use of the operation.</summary>
        public ulong UserData => ((ulong)(_generation & 0x3FFFFFFF) << 32) | (uint)_index;

        public int Where { get; set; }

        public Operation? BacklogNext { get; set; }

        public Operation? BacklogPrevious { get; set; }

        public bool CancelQueued { get; set; }

        public Operation? CancelNext { get; set; }

        protected override void OnStart() => _generation++;

        protected override void OnCancelled() => _engine.Cancel(this);

        protected override void ReturnToPool() => _engine.Return(this);
    }
}
