namespace KvEngine.Db;

/// <summary>
/// One caller's write waiting in the group-commit queue. Fields are guarded by the database
/// mutex; <see cref="Completion"/> is set for asynchronous callers (no thread waits for them).
/// </summary>
internal sealed class WriteRequest
{
    public WriteRequest(WriteBatch? batch, bool sync, bool disableWal, bool forceMemTableSwitch, bool isAsync)
    {
        Batch = batch;
        Sync = sync;
        DisableWal = disableWal;
        ForceMemTableSwitch = forceMemTableSwitch;
        Completion = isAsync ? new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously) : null;
    }

    /// <summary>Null for a flush request (a memtable switch serialized with writes).</summary>
    public WriteBatch? Batch { get; }

    public bool Sync { get; }

    public bool DisableWal { get; }

    public bool ForceMemTableSwitch { get; }

    public TaskCompletionSource? Completion { get; }

    public bool Done { get; set; }

    public Exception? Error { get; set; }

    /// <summary>For a flush request: the immutable memtable it produced (null if nothing to flush).</summary>
    public ImmutableMemTable? SwitchedOut { get; set; }
}
