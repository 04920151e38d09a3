using KvEngine.Db.State;

namespace KvEngine.Db.Write;

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

    /// <summary>
    /// Checks run by the leader before the batch takes sequence numbers, with every earlier write
    /// in the memtables (an optimistic transaction's conflict check); a request with one leads a
    /// group of its own. Null for a plain write.
    /// </summary>
    public IWriteValidator? Validator { get; set; }

    /// <summary>
    /// An unbatched writer (RocksDB's EnterUnbatched): no batch, no memtable switch; once at the
    /// head of the queue, with every earlier group done, it holds the write path alone until it
    /// finishes its group (ingestion assigns sequence numbers this way).
    /// </summary>
    public bool Exclusive { get; set; }

    private volatile bool _done;

    /// <summary>Set under the mutex by the leader; read without it by a spinning waiter.</summary>
    public bool Done
    {
        get => _done;
        set => _done = value;
    }

    public Exception? Error { get; set; }

    // Concurrent memtable insert hand-off (see WriteGroupInserter): Waiting -> Assigned by the leader,
    // Waiting -> Sleeping by the waiter before it sleeps, Assigned -> Inserted by the waiter.
    public const int InsertWaiting = 0;
    public const int InsertSleeping = 1;
    public const int InsertAssigned = 2;
    public const int InsertInserted = 3;

    private int _insertState;

    public int InsertState => Volatile.Read(ref _insertState);

    /// <summary>First sequence number of this request's batch inside its group (set by the leader).</summary>
    public ulong InsertSequence { get; set; }

    /// <summary>The leader handed this request's insert to its own thread (Assigned, then Inserted).</summary>
    public bool InsertHandedOut => InsertState >= InsertAssigned;

    /// <summary>The group whose leader assigned this request its insert (set before the assignment).</summary>
    public WriteGroup? Group { get; set; }

    /// <summary>Leader: hands this request's memtable insert to its waiting thread; false when it stopped spinning.</summary>
    public bool TryAssignInsert() => Interlocked.CompareExchange(ref _insertState, InsertAssigned, InsertWaiting) == InsertWaiting;

    /// <summary>Waiter: stops taking work before sleeping; returns the state it found (Assigned: insert first).</summary>
    public int StopTakingInserts() => Interlocked.CompareExchange(ref _insertState, InsertSleeping, InsertWaiting);

    public void MarkInserted() => Volatile.Write(ref _insertState, InsertInserted);

    public WriteRequest? Next { get; set; }

    public static WriteRequest ForAsync(WriteBatch batch, WriteOptions options)
    {
        var r = new WriteRequest();
        r.Reset(batch, options.Sync, options.DisableWal, force: false);
        r.Completion = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        return r;
    }

    /// <summary>With <see cref="ForceMemTableSwitch"/>: the families whose memtables switch (null: every family).</summary>
    public IReadOnlyList<ColumnFamilyData>? ForceFamilies { get; private set; }

    public void Reset(WriteBatch? batch, bool sync, bool disableWal, bool force, IReadOnlyList<ColumnFamilyData>? forceFamilies = null)
    {
        Batch = batch;
        ForceFamilies = forceFamilies;
        Sync = sync;
        DisableWal = disableWal;
        ForceMemTableSwitch = force;
        Exclusive = false;
        Validator = null;
        Completion = null;
        Done = false;
        Error = null;
        Next = null;
        InsertSequence = 0;
        Group = null;
        _insertState = InsertWaiting;
    }
}
