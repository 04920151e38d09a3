namespace KvEngine.Db;

/// <summary>
/// One caller's write waiting in the group-commit queue, linked intrusively (<see cref="Next"/>)
/// so queueing allocates nothing. A synchronous caller reuses one request per thread (it waits
/// until the request is done, so it is never in the queue twice); an asynchronous caller gets a
/// fresh one with a <see cref="Completion"/>. All fields are guarded by the database mutex.
/// </summary>
internal sealed class WriteRequest
{
    public WriteBatch? Batch { get; private set; }

    public bool Sync { get; private set; }

    public bool DisableWal { get; private set; }

    /// <summary>A flush request: switch the memtable (serialized with writes); no batch.</summary>
    public bool ForceMemTableSwitch { get; private set; }

    public TaskCompletionSource? Completion { get; private set; }

    private volatile bool _done;

    /// <summary>Set under the mutex by the leader; read without it by a spinning waiter.</summary>
    public bool Done
    {
        get => _done;
        set => _done = value;
    }

    public Exception? Error { get; set; }

    public WriteRequest? Next { get; set; }

    public static WriteRequest ForAsync(WriteBatch batch, WriteOptions options)
    {
        var r = new WriteRequest();
        r.Reset(batch, options.Sync, options.DisableWal, force: false);
        r.Completion = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        return r;
    }

    public void Reset(WriteBatch? batch, bool sync, bool disableWal, bool force)
    {
        Batch = batch;
        Sync = sync;
        DisableWal = disableWal;
        ForceMemTableSwitch = force;
        Completion = null;
        Done = false;
        Error = null;
        Next = null;
    }
}
