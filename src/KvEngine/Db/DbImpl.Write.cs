using KvEngine.Format;

namespace KvEngine.Db;

/// <summary>
/// The write path: group commit, WAL append, memtable insert, memtable switches.
/// <para>
/// Writers queue in an intrusive list under _mutex; the request at its head leads a group: it
/// makes room (PrepareGroup: stalls, memtable switch, takes followers, reserves sequence
/// numbers), writes one WAL record for the group (and at most one fsync), inserts into the
/// memtable and publishes the group's sequence numbers (LastSequence), which makes it visible.
/// With <see cref="KvOptions.AllowConcurrentMemtableWrite"/> the stages overlap as in RocksDB's
/// pipelined write with concurrent memtable writes: once its WAL record is written a group leaves
/// the queue, so the next group's WAL write runs while it inserts, and several groups (and the
/// members of each, DbImpl.MemTableInsert.cs) insert at once. Publication stays in sequence
/// order: a group waits until every group before it has published (_orderCursor). A memtable
/// switch waits until no group is inserting (_inflightInserts), so a memtable is never written
/// after it became immutable. A group pipelines only when something could overlap it
/// (ChooseInsertMode); otherwise, and always without the option, it leaves the queue once
/// published.
/// </para>
/// </summary>
internal sealed partial class DbImpl
{
    /// <summary>A group grows to at most this many bytes (RocksDB: 1 MiB, less for a small leader).</summary>
    private const int MaxGroupBytes = 1 << 20;

    [ThreadStatic]
    private static WriteRequest? t_request;

    // Group-commit queue (intrusive list), guarded by _mutex.
    private WriteRequest? _queueHead;
    private WriteRequest? _queueTail;
    private int _syncWaiters;


    public void Write(WriteBatch batch, WriteOptions options)
    {
        ThrowIfDisposed();
        ValidateWrite(batch, options);
        ValidateFamilies(batch);
        WriteSync(batch, options.Sync, options.DisableWal, force: false);
    }

    /// <summary>
    /// Refuses a batch that writes a column family this database does not have (never had, or
    /// dropped): RocksDB's InvalidArgument. A drop racing the write may still win; the write is
    /// then applied to nothing, as if it had come just before the drop.
    /// </summary>
    private void ValidateFamilies(WriteBatch batch)
    {
        if (batch.OtherColumnFamilies is not { } ids)
        {
            return;
        }
        ColumnFamilyData?[] byId = Volatile.Read(ref _familiesById);
        foreach (uint id in ids)
        {
            if (id >= (uint)byId.Length || byId[id] == null)
            {
                throw new ArgumentException(
                    $"The batch writes column family {id.ToString(System.Globalization.CultureInfo.InvariantCulture)}, which this database does not have (dropped, or of another database).",
                    nameof(batch));
            }
        }
    }

    /// <summary>
    /// Refuses a request before it joins the writer queue: a request that could only fail inside a
    /// group (e.g. a disposed batch) must never reach it.
    /// </summary>
    private static void ValidateWrite(WriteBatch batch, WriteOptions options)
    {
        ArgumentNullException.ThrowIfNull(batch);
        ArgumentNullException.ThrowIfNull(options);
        _ = batch.ApproximateSize; // ObjectDisposedException for a disposed batch
        if (options.Sync && options.DisableWal)
        {
            // RocksDB: InvalidArgument "Sync writes has to enable WAL."
            throw new ArgumentException("A Sync write needs the WAL: Sync and DisableWal cannot both be set.", nameof(options));
        }
    }

    /// <summary>Called once recovery has set the last sequence number, before any write.</summary>
    private void InitializeWriteSequences(ulong lastSequence)
    {
        _lastAllocatedSequence = lastSequence;
        _orderCursor = lastSequence;
    }

    /// <summary>
    /// A synchronous write (or, with <paramref name="force"/>, a memtable switch of
    /// <paramref name="forceFamilies"/>, every family when null).
    /// </summary>
    private void WriteSync(WriteBatch? batch, bool sync, bool disableWal, bool force, IReadOnlyList<ColumnFamilyData>? forceFamilies = null)
    {
        if (!force)
        {
            ThrowIfDisposed(); // a forced switch is also how Dispose persists unlogged writes
        }
        WriteRequest request = t_request ??= new WriteRequest();
        request.Reset(batch, sync, disableWal, force, forceFamilies);
        t_request = null; // while in use; a request abandoned in the queue (thread interrupt) is never reused
        WriteGroup? group = null;
        lock (_mutex)
        {
            Enqueue(request);
            if (_queueHead == request)
            {
                group = PrepareGroup(request);
            }
        }
        if (group != null || AwaitTurn(request, out group))
        {
            LeadGroups(group);
        }
        t_request = request;
        Exception? error = request.Error;
        request.Reset(null, false, false, false); // drop references to the caller's batch
        if (error != null)
        {
            throw Wrap(error);
        }
    }

    /// <summary>
    /// Waits until <paramref name="request"/> is done (a leader committed it) or first in the queue
    /// (it must lead); returns true in the second case, with its group prepared. A group commit
    /// takes microseconds, so the waiter first spins on the request's state (RocksDB's write
    /// thread does the same), inserting its own batch if the leader hands it over, and only then
    /// sleeps on the mutex: a sleep and wake-up per write would cost more than the write. No
    /// wake-up is lost: the decision to sleep is re-checked under the mutex, and leaders pulse
    /// under it whenever a sleeper is registered.
    /// </summary>
    private bool AwaitTurn(WriteRequest request, out WriteGroup group)
    {
        SpinUntilTurn(request);
        while (true)
        {
            lock (_mutex)
            {
                bool assigned = false;
                while (!request.Done && _queueHead != request)
                {
                    // No insert may be handed to a sleeper: stop taking them first. One handed
                    // over just before is done outside the lock, then the wait goes on.
                    if (request.StopTakingInserts() == WriteRequest.InsertAssigned)
                    {
                        assigned = true;
                        break;
                    }
                    _syncWaiters++;
                    try
                    {
                        Monitor.Wait(_mutex);
                    }
                    finally
                    {
                        _syncWaiters--;
                    }
                }
                if (!assigned)
                {
                    if (request.Done)
                    {
                        group = null!;
                        return false;
                    }
                    group = PrepareGroup(request);
                    return true;
                }
            }
            InsertAssigned(request);
        }
    }

    public ValueTask WriteAsync(WriteBatch batch, WriteOptions options, CancellationToken cancellationToken)
    {
        ThrowIfDisposed();
        cancellationToken.ThrowIfCancellationRequested();
        ValidateWrite(batch, options);
        ValidateFamilies(batch);
        WriteRequest request = WriteRequest.ForAsync(batch, options);
        WriteGroup group;
        lock (_mutex)
        {
            Enqueue(request);
            if (_queueHead != request)
            {
                // A leader (sync or async) is running: it will commit this request too.
                return new ValueTask(request.Completion!.Task);
            }
            group = PrepareGroup(request);
        }
        LeadGroups(group);
        return request.Error != null ? ValueTask.FromException(Wrap(request.Error)) : ValueTask.CompletedTask;
    }

    /// <summary>
    /// Runs the prepared <paramref name="group"/> to the end, then leads following groups whose
    /// front request is asynchronous (no thread waits to lead them); a synchronous front request
    /// leads its own group (it spins on the queue head, or is woken).
    /// </summary>
    private void LeadGroups(WriteGroup group)
    {
        while (true)
        {
            WriteWal(group);
            WriteRequest? asyncHead = null;
            if (group.Error == null && group.Leader.Batch != null)
            {
                bool concurrent = false;
                if (_options.AllowConcurrentMemtableWrite && !IsLoneGroup(group))
                {
                    lock (_mutex)
                    {
                        concurrent = ChooseInsertMode(group, ref asyncHead);
                    }
                }
                else
                {
                    UseSingleWriterInsert(group);
                }
                InsertGroup(group, concurrent);
            }
            AwaitTurnToPublish(group);
            lock (_mutex)
            {
                WriteRequest? exposed = PublishGroup(group);
                asyncHead ??= exposed;
                if (asyncHead != null)
                {
                    group = PrepareGroup(asyncHead);
                    continue;
                }
                return;
            }
        }
    }

    private void Enqueue(WriteRequest request)
    {
        if (_queueTail == null)
        {
            _queueHead = request;
        }
        else
        {
            _queueTail.Next = request;
        }
        _queueTail = request;
    }

    /// <summary>
    /// Holds _mutex. Makes room, then takes followers into a group led by
    /// <paramref name="leader"/> and reserves its sequence numbers. A failure to make room is the
    /// group's error (it then reserves nothing).
    /// </summary>
    private WriteGroup PrepareGroup(WriteRequest leader)
    {
        WriteGroup group = _groupPool.Count > 0 ? _groupPool.Pop() : new WriteGroup();
        group.Members.Add(leader);
        group.FirstSequence = _lastAllocatedSequence + 1;
        try
        {
            MakeRoomForWrite(leader.ForceMemTableSwitch, leader.ForceFamilies);
        }
        catch (Exception e) when (e is IOException or KvException or ObjectDisposedException)
        {
            group.Error = e;
            return group;
        }
        group.Families = _familiesById;
        if (leader.Batch != null)
        {
            long bytes = leader.Batch.ApproximateSize;
            long limit = bytes <= 128 << 10 ? bytes + (128 << 10) : MaxGroupBytes;
            int count = leader.Batch.Count;
            for (WriteRequest? w = leader.Next; w != null; w = w.Next)
            {
                if (w.Batch == null || (w.Sync && !leader.Sync) || w.DisableWal != leader.DisableWal)
                {
                    break;
                }
                bytes += w.Batch.ApproximateSize;
                if (bytes > limit)
                {
                    break;
                }
                group.Members.Add(w);
                count += w.Batch.Count;
            }
            group.Count = count;
            _lastGroupBytes = bytes;
            _lastAllocatedSequence += (ulong)count;
        }
        return group;
    }

    /// <summary>Outside _mutex: one WAL record (and at most one fsync) for the group; a failure stops the database.</summary>
    private void WriteWal(WriteGroup group)
    {
        WriteRequest leader = group.Leader;
        if (group.Error != null || leader.Batch == null)
        {
            return;
        }
        try
        {
            WriteBatch batch = leader.Batch;
            if (group.Members.Count > 1)
            {
                batch = group.CombinedBatch;
                foreach (WriteRequest w in group.Members)
                {
                    batch.Append(w.Batch!);
                }
            }
            batch.Sequence = group.FirstSequence;
            if (!leader.DisableWal)
            {
                _log!.AddRecord(batch.Data);
                _logFile!.Flush();
                Interlocked.Add(ref _currentLogBytes, batch.Data.Length);
                if (leader.Sync)
                {
                    _logFile.Sync();
                }
            }
            if (_stats is { } stats)
            {
                stats.Record(Ticker.NumberKeysWritten, batch.Count);
                stats.Record(Ticker.BytesWritten, batch.Data.Length);
                stats.Record(Ticker.WriteDoneBySelf);
                if (group.Members.Count > 1)
                {
                    stats.Record(Ticker.WriteDoneByOther, group.Members.Count - 1);
                }
                if (!leader.DisableWal)
                {
                    stats.Record(Ticker.WalFileBytes, batch.Data.Length);
                    if (leader.Sync)
                    {
                        stats.Record(Ticker.WalFileSynced);
                    }
                }
            }
        }
        catch (Exception e)
        {
            // The WAL may end in a partial record: accept no more writes (RocksDB's background
            // error). The group still completes, with the error, so the queue never stalls.
            group.Error = e;
            lock (_mutex)
            {
                SetBackgroundError(e, Diagnostics.BackgroundJobKind.WalWrite);
            }
        }
    }

    private static void Complete(WriteRequest w, Exception? error)
    {
        w.Done = true;
        w.Error = error;
        if (w.Completion != null)
        {
            if (error != null)
            {
                w.Completion.TrySetException(Wrap(error));
            }
            else
            {
                w.Completion.TrySetResult();
            }
        }
    }

    private static Exception Wrap(Exception e) =>
        e is KvException or ObjectDisposedException ? e : new KvException("Write failed: " + e.Message, e);
}
