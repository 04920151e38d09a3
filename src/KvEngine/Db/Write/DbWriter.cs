using KvEngine.Db.Background;
using KvEngine.Db.Errors;
using KvEngine.Db.Logs;
using KvEngine.Db.State;
using KvEngine.Diagnostics;
using KvEngine.Versions;

namespace KvEngine.Db.Write;

/// <summary>
/// The write path (RocksDB's DBImpl::WriteImpl and its pipelined variant): a writer joins the
/// <see cref="WriteThread"/>; the leader of a group makes room (<see cref="MemTableSwitcher"/>:
/// stalls, memtable switches), writes one WAL record for the group (<see cref="WalSet.Append"/>,
/// at most one fsync), inserts each record into its family's memtable
/// (<see cref="WriteGroupInserter"/>) and publishes the group's sequence numbers
/// (<see cref="VersionSet.SetLastSequence"/>), which makes it visible. One WAL and one sequence for
/// every family, so a batch is atomic across families. With
/// <see cref="KvOptions.AllowConcurrentMemtableWrite"/> the stages overlap as in RocksDB's
/// pipelined write with concurrent memtable writes: publication stays in sequence order, and a
/// memtable switch waits until no group is inserting, so a memtable is never written after it
/// became immutable. Also the unbatched writer (RocksDB's EnterUnbatched: an ingestion stops
/// every write) and the forced memtable switch (Flush, close, resume), which go through the same queue.
/// <para>
/// Invariants: groups are prepared (room made, sequence numbers reserved) in queue order by the
/// queue's head, under the mutex; the WAL is appended by one leader at a time, in that order;
/// the last sequence number only grows, one group after another; a request that could only fail
/// inside a group is refused before it joins the queue; every request that joined completes,
/// with its group's error if the group failed.
/// </para>
/// <para>
/// Thread-safety: called from any thread. The mutex guards the queue and group preparation and
/// publication (see <see cref="WriteThread"/>); the WAL write and the memtable inserts run
/// outside it. The hot path allocates nothing: one <see cref="WriteRequest"/> per thread, groups
/// pooled by the write thread. It calls sealed types directly, through no delegate; the only
/// interface calls are the WAL file's and the write thread's worker
/// (<see cref="IWriteGroupWorker"/>: a waiting writer that becomes a leader or takes its own insert).
/// </para>
/// </summary>
internal sealed class DbWriter : IWriteGroupWorker, IDisposable
{
    [ThreadStatic]
    private static WriteRequest? t_request;

    private readonly DbMutex _mutex;
    private readonly bool _concurrentMemtableWrite;
    private readonly VersionSet _versions;
    private readonly ColumnFamilySet _families;
    private readonly WalSet _wals;
    private readonly ErrorHandler _errors;
    private readonly KvStatistics? _stats;
    private readonly WriteThread _writeThread;
    private readonly WriteStalls _stalls;
    private readonly MemTableSwitcher _switcher;
    private readonly WriteGroupInserter _inserter;

    public DbWriter(
        DbMutex mutex, KvOptions options, VersionSet versions, ColumnFamilySet families, WalSet wals,
        ErrorHandler errors, BackgroundScheduler scheduler, DbTelemetry telemetry, Compaction.EngineCounters counters)
    {
        _mutex = mutex;
        _concurrentMemtableWrite = options.AllowConcurrentMemtableWrite;
        _versions = versions;
        _families = families;
        _wals = wals;
        _errors = errors;
        _stats = options.Statistics;
        _writeThread = new WriteThread(mutex, options.WriteThreadSpinIterations, this);
        _stalls = new WriteStalls(mutex, families, options.DelayedWriteRate, telemetry, counters);
        _switcher = new MemTableSwitcher(mutex, options, versions, families, wals, _writeThread, _stalls, errors, scheduler);
        _inserter = new WriteGroupInserter(mutex, _writeThread, errors);
    }

    /// <summary>The writer queue (sequence initialization at open, failing queued writers at close).</summary>
    public WriteThread Thread => _writeThread;

    /// <summary>The memtable switch (dropped families' memtables; an ingestion's forced switch).</summary>
    public MemTableSwitcher Switcher => _switcher;

    /// <summary>Batches inserted by their own writer thread in a concurrent group (tests, diagnostics).</summary>
    public long MemberInserts => _inserter.MemberInserts;

    /// <summary>A synchronous write of <paramref name="batch"/>; returns when it is visible (and durable with Sync).</summary>
    public void Write(WriteBatch batch, WriteOptions options)
    {
        ValidateWrite(batch, options);
        ValidateFamilies(batch);
        Commit(batch, options.Sync, options.DisableWal, force: false);
    }

    /// <summary>
    /// A synchronous write of <paramref name="batch"/> that <paramref name="validator"/> may refuse:
    /// it runs when the write leads its own group, every earlier write in the memtables, before
    /// sequence numbers are given (RocksDB's WriteWithCallback). Its <see cref="KvException"/> is
    /// thrown and nothing is written.
    /// </summary>
    public void Write(WriteBatch batch, WriteOptions options, IWriteValidator validator)
    {
        ArgumentNullException.ThrowIfNull(validator);
        ValidateWrite(batch, options);
        ValidateFamilies(batch);
        Commit(batch, options.Sync, options.DisableWal, force: false, validator: validator);
    }

    /// <summary>
    /// An asynchronous write: completes at once when this call led the group, otherwise when the
    /// leader that took it in does.
    /// </summary>
    public ValueTask WriteAsync(WriteBatch batch, WriteOptions options)
    {
        ValidateWrite(batch, options);
        ValidateFamilies(batch);
        WriteRequest request = WriteRequest.ForAsync(batch, options);
        WriteGroup group;
        using (_mutex.Lock())
        {
            if (!_writeThread.Enqueue(request))
            {
                // A leader (sync or async) is running: it will commit this request too.
                return new ValueTask(request.Completion!.Task);
            }
            group = PrepareGroup(request);
        }
        LeadGroups(group);
        return request.Error != null ? ValueTask.FromException(ErrorHandler.Wrap(request.Error)) : ValueTask.CompletedTask;
    }

    /// <summary>
    /// A forced memtable switch of <paramref name="families"/> (every family when null) through the
    /// writer queue, serialized with writes: Flush, the close's flush, and a resume's switch to a
    /// fresh WAL (which passes while the error handler is resuming).
    /// </summary>
    public void SwitchMemTables(IReadOnlyList<ColumnFamilyData>? families) =>
        Commit(batch: null, sync: false, disableWal: false, force: true, families);

    /// <summary>The database is closing: writes that have not made room yet fail (forced switches pass).</summary>
    public void StopAcceptingWrites() => _switcher.StopAcceptingWrites();

    /// <summary>The close's flush is done: forced memtable switches fail too (<see cref="MemTableSwitcher.StopAcceptingSwitches"/>).</summary>
    public void StopAcceptingSwitches() => _switcher.StopAcceptingSwitches();

    /// <summary>
    /// Joins the writer queue as an unbatched writer (RocksDB's EnterUnbatched) and waits until it
    /// leads and every earlier group has published and finished inserting: from then until
    /// <see cref="ExitUnbatched"/> no write runs. The caller holds no lock.
    /// </summary>
    public WriteGroup EnterUnbatched()
    {
        _mutex.AssertNotHeld();
        var request = new WriteRequest();
        request.Reset(null, sync: false, disableWal: false, force: false);
        request.Exclusive = true;
        WriteGroup? group = null;
        using (_mutex.Lock())
        {
            if (_writeThread.Enqueue(request))
            {
                group = PrepareGroup(request);
            }
        }
        if (group == null && !_writeThread.AwaitTurn(request, out group))
        {
            // Completed without leading: the database closed under a misused handle.
            throw ErrorHandler.Wrap(request.Error ?? new ObjectDisposedException(nameof(KvDb)));
        }
        _writeThread.AwaitTurnToPublish(group);
        using (_mutex.Lock())
        {
            while (_writeThread.WaitForInflightInserts())
            {
            }
        }
        return group;
    }

    /// <summary>Leaves the writer queue (RocksDB's ExitUnbatched); leads the next group when it is asynchronous.</summary>
    public void ExitUnbatched(WriteGroup group)
    {
        WriteGroup? next = null;
        using (_mutex.Lock())
        {
            if (_writeThread.FinishGroup(group) is { } asyncHead)
            {
                next = PrepareGroup(asyncHead);
            }
        }
        if (next != null)
        {
            LeadGroups(next);
        }
    }

    /// <summary>
    /// Holds the mutex. Makes room, then takes followers into a group led by
    /// <paramref name="leader"/> and reserves its sequence numbers. A failure to make room is the
    /// group's error (it then reserves nothing).
    /// </summary>
    public WriteGroup PrepareGroup(WriteRequest leader)
    {
        _mutex.AssertHeld();
        WriteGroup group = _writeThread.BeginGroup(leader);
        if (leader.Exclusive)
        {
            return group; // an unbatched writer makes no room: it writes no memtable
        }
        try
        {
            _switcher.MakeRoom(leader.ForceMemTableSwitch, leader.ForceFamilies);
        }
        catch (Exception e) when (e is IOException or KvException or ObjectDisposedException)
        {
            group.Error = e;
            return group;
        }
        group.Families = _families.ById;
        if (leader.Validator is { } validator)
        {
            // Every earlier write must be in the memtables before the check: pipelined groups
            // may still be inserting. The queue's head alone prepares groups, so none starts meanwhile.
            while (_writeThread.WaitForInflightInserts())
            {
            }
            try
            {
                validator.Validate(_families.ById);
            }
            catch (KvException e)
            {
                group.Error = e;
                return group; // takes no sequence number: nothing is written
            }
        }
        if (leader.Batch != null)
        {
            _stalls.LastGroupBytes = _writeThread.AddFollowers(group);
        }
        return group;
    }

    /// <summary>Member, outside the mutex: inserts its own batch at the sequence the leader gave it.</summary>
    public void InsertAssigned(WriteRequest request) => WriteGroupInserter.InsertAssigned(request);

    public void Dispose() => _writeThread.Dispose();

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

    /// <summary>
    /// Refuses a batch that writes a column family this database does not have (never had, or
    /// dropped): RocksDB's InvalidArgument. A drop racing the write may still win; the write is
    /// then applied to nothing, as if it had come just before the drop.
    /// </summary>
    private void ValidateFamilies(WriteBatch batch)
    {
        ColumnFamilyData?[] byId = _families.ById;
        // Indexed loops: a foreach over the IReadOnlyList would box its enumerator on every write.
        if (batch.OtherColumnFamilies is { } ids)
        {
            for (int i = 0; i < ids.Count; i++)
            {
                uint id = ids[i];
                if (id >= (uint)byId.Length || byId[id] == null)
                {
                    throw new ArgumentException(
                        $"The batch writes column family {id.ToString(System.Globalization.CultureInfo.InvariantCulture)}, which this database does not have (dropped, or of another database).",
                        nameof(batch));
                }
            }
        }
        if (batch.MergeColumnFamilies is { } merges)
        {
            // RocksDB: "merge_operator is not properly initialized" (refused here, before the WAL).
            for (int i = 0; i < merges.Count; i++)
            {
                uint id = merges[i];
                if (id < (uint)byId.Length && byId[id] is { } cfd && cfd.Options.MergeOperator is null)
                {
                    throw new InvalidOperationException(
                        $"The batch merges into column family '{cfd.Name}', which has no ColumnFamilyOptions.MergeOperator (RocksDB: merge_operator is not properly initialized).");
                }
            }
        }
    }

    /// <summary>
    /// A synchronous write (or, with <paramref name="force"/>, a memtable switch of
    /// <paramref name="forceFamilies"/>, every family when null).
    /// </summary>
    private void Commit(WriteBatch? batch, bool sync, bool disableWal, bool force, IReadOnlyList<ColumnFamilyData>? forceFamilies = null,
        IWriteValidator? validator = null)
    {
        WriteRequest request = t_request ??= new WriteRequest();
        request.Reset(batch, sync, disableWal, force, forceFamilies);
        request.Validator = validator;
        t_request = null; // while in use; a request abandoned in the queue (thread interrupt) is never reused
        WriteGroup? group = null;
        using (_mutex.Lock())
        {
            if (_writeThread.Enqueue(request))
            {
                group = PrepareGroup(request);
            }
        }
        if (group != null || _writeThread.AwaitTurn(request, out group))
        {
            LeadGroups(group);
        }
        t_request = request;
        Exception? error = request.Error;
        request.Reset(null, false, false, false); // drop references to the caller's batch
        if (error != null)
        {
            throw ErrorHandler.Wrap(error);
        }
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
                if (_concurrentMemtableWrite && !_writeThread.IsLoneGroup(group))
                {
                    using (_mutex.Lock())
                    {
                        concurrent = _writeThread.ChooseInsertMode(group, ref asyncHead);
                    }
                }
                else
                {
                    _writeThread.UseSingleWriterInsert(group);
                }
                _inserter.InsertGroup(group, concurrent);
            }
            _writeThread.AwaitTurnToPublish(group);
            using (_mutex.Lock())
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

    /// <summary>Outside the mutex: one WAL record (and at most one fsync) for the group; a failure stops the database.</summary>
    private void WriteWal(WriteGroup group)
    {
        _mutex.AssertNotHeld();
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
                _wals.Append(batch.Data, leader.Sync);
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
            using (_mutex.Lock())
            {
                _errors.SetBackgroundError(e, BackgroundJobKind.WalWrite);
            }
        }
    }

    /// <summary>
    /// Holds the mutex; every earlier group is done. Publishes the group's sequence numbers (unless
    /// it failed, or an earlier group's insert failed), then lets the write thread complete it.
    /// Returns the queue's new head when it is asynchronous and this call exposed it.
    /// </summary>
    private WriteRequest? PublishGroup(WriteGroup group)
    {
        _mutex.AssertHeld();
        if (group.Error == null && _writeThread.InsertFailed && group.Count > 0)
        {
            group.Error = new KvException("The write was not applied: an earlier write failed to reach the memtable.", KvStatusCode.Aborted, KvStatusSubCode.None, null);
        }
        if (group.Count > 0 && group.Error == null)
        {
            _versions.SetLastSequence(group.LastSequence);
            if (group.Leader.DisableWal)
            {
                MarkUnpersisted(group);
            }
        }
        return _writeThread.FinishGroup(group);
    }

    /// <summary>Holds the mutex. The families the group's batches wrote now hold data no WAL has.</summary>
    private void MarkUnpersisted(WriteGroup group)
    {
        _mutex.AssertHeld();
        foreach (WriteRequest w in group.Members)
        {
            if (w.Batch!.OtherColumnFamilies is { } ids)
            {
                for (int i = 0; i < ids.Count; i++)
                {
                    uint id = ids[i];
                    if (id < (uint)group.Families.Length && group.Families[id] is { } cfd)
                    {
                        cfd.HasUnpersistedWrites = true;
                    }
                }
            }
            if (w.Batch.WritesDefaultColumnFamily && group.Families[0] is { } defaultFamily)
            {
                defaultFamily.HasUnpersistedWrites = true;
            }
        }
    }
}
