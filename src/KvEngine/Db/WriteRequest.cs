namespace KvEngine.Db;

/// <summary>
/// One caller's write waiting in the group-commit queue. Fields are guarded by the database
/// mutex; <see cref="Completion"/> is set for asynchronous callers (no thread waits for them).
/// <para>
/// A request carries its own queue <see cref="Node"/>, so that a synchronous writer can reuse one
/// request (see <see cref="Reuse"/>) and enqueue without allocating. Reuse is allowed only once
/// the request is out of every queue (<c>Node.List == null</c>) and its caller has read the
/// outcome: no other thread touches a completed request after the leader released the mutex.
/// </para>
/// </summary>
internal sealed class WriteRequest
{
    public WriteRequest(WriteBatch? batch, bool sync, bool disableWal, bool forceMemTableSwitch, bool isAsync)
    {
        Node = new LinkedListNode<WriteRequest>(this);
        Batch = batch;
        Sync = sync;
        DisableWal = disableWal;
        ForceMemTableSwitch = forceMemTableSwitch;
        Completion = isAsync ? new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously) : null;
    }

    /// <summary>This request's node in the writer queue (enqueue it with <c>AddLast(Node)</c>).</summary>
    public LinkedListNode<WriteRequest> Node { get; }

    /// <summary>Null for a flush request (a memtable switch serialized with writes).</summary>
    public WriteBatch? Batch { get; private set; }

    public bool Sync { get; private set; }

    public bool DisableWal { get; private set; }

    public bool ForceMemTableSwitch { get; }

    public TaskCompletionSource? Completion { get; }

    public bool Done { get; set; }

    public Exception? Error { get; set; }

    /// <summary>For a flush request: the immutable memtable it produced (null if nothing to flush).</summary>
    public ImmutableMemTable? SwitchedOut { get; set; }

    /// <summary>Whether <see cref="Reuse"/> may be called: a synchronous write request in no queue.</summary>
    public bool IsReusable => Completion == null && !ForceMemTableSwitch && Node.List == null;

    /// <summary>Makes a finished, dequeued synchronous write request a new pending one.</summary>
    public void Reuse(WriteBatch batch, bool sync, bool disableWal)
    {
        if (!IsReusable)
        {
            throw new InvalidOperationException("Only a dequeued synchronous write request can be reused.");
        }
        Batch = batch;
        Sync = sync;
        DisableWal = disableWal;
        Done = false;
        Error = null;
        SwitchedOut = null;
    }

    /// <summary>Drops the references to the caller's batch and error once the caller has the outcome.</summary>
    public void Release()
    {
        Batch = null;
        Error = null;
        SwitchedOut = null;
    }
}
