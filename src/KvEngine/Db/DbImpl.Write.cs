using KvEngine.Db.Background;
using KvEngine.Format;

namespace KvEngine.Db;

/// <summary>
/// The write path (RocksDB's WriteImpl): a writer joins the <see cref="WriteThread"/>; the leader
/// of a group makes room (PrepareGroup: stalls, memtable switches, DbImpl.MakeRoom.cs), writes one
/// WAL record for the group (and at most one fsync), inserts each record into its family's
/// memtable (DbImpl.MemTableInsert.cs) and publishes the group's sequence numbers (LastSequence),
/// which makes it visible. With <see cref="KvOptions.AllowConcurrentMemtableWrite"/> the stages
/// overlap as in RocksDB's pipelined write with concurrent memtable writes (see
/// <see cref="WriteThread"/>): publication stays in sequence order, and a memtable switch waits
/// until no group is inserting, so a memtable is never written after it became immutable.
/// </summary>
internal sealed partial class DbImpl
{
    [ThreadStatic]
    private static WriteRequest? t_request;


    public void Write(WriteBatch batch, WriteOptions options)
    {
        ThrowIfDisposed();
        ThrowIfReadOnly("Write");
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
        ColumnFamilyData?[] byId = _families.ById;
        if (batch.OtherColumnFamilies is { } ids)
        {
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
        if (batch.MergeColumnFamilies is { } merges)
        {
            // RocksDB: "merge_operator is not properly initialized" (refused here, before the WAL).
            foreach (uint id in merges)
            {
                if (id < (uint)byId.Length && byId[id] is { } cfd && cfd.Options.MergeOperator is null)
                {
                    throw new InvalidOperationException(
                        $"The batch merges into column family '{cfd.Name}', which has no ColumnFamilyOptions.MergeOperator (RocksDB: merge_operator is not properly initialized).");
                }
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

    public ValueTask WriteAsync(WriteBatch batch, WriteOptions options, CancellationToken cancellationToken)
    {
        ThrowIfDisposed();
        ThrowIfReadOnly("Write");
        cancellationToken.ThrowIfCancellationRequested();
        ValidateWrite(batch, options);
        ValidateFamilies(batch);
        WriteRequest request = WriteRequest.ForAsync(batch, options);
        WriteGroup group;
        lock (_mutex)
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
                if (_options.AllowConcurrentMemtableWrite && !_writeThread.IsLoneGroup(group))
                {
                    lock (_mutex)
                    {
                        concurrent = _writeThread.ChooseInsertMode(group, ref asyncHead);
                    }
                }
                else
                {
                    _writeThread.UseSingleWriterInsert(group);
                }
                InsertGroup(group, concurrent);
            }
            _writeThread.AwaitTurnToPublish(group);
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

    /// <summary>
    /// Holds _mutex. Makes room, then takes followers into a group led by
    /// <paramref name="leader"/> and reserves its sequence numbers. A failure to make room is the
    /// group's error (it then reserves nothing).
    /// </summary>
    public WriteGroup PrepareGroup(WriteRequest leader)
    {
        WriteGroup group = _writeThread.BeginGroup(leader);
        if (leader.Exclusive)
        {
            return group; // an unbatched writer makes no room: it writes no memtable (DbImpl.Ingest.cs)
        }
        try
        {
            MakeRoomForWrite(leader.ForceMemTableSwitch, leader.ForceFamilies);
        }
        catch (Exception e) when (e is IOException or KvException or ObjectDisposedException)
        {
            group.Error = e;
            return group;
        }
        group.Families = _families.ById;
        if (leader.Batch != null)
        {
            _lastGroupBytes = _writeThread.AddFollowers(group);
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
                Volatile.Write(ref _logFileFlushedSize, _logFile.Size); // a record boundary (checkpoints copy up to it)
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
                _errors.SetBackgroundError(e, Diagnostics.BackgroundJobKind.WalWrite);
            }
        }
    }

    /// <summary>
    /// Holds _mutex; every earlier group is done. Publishes the group's sequence numbers (unless
    /// it failed, or an earlier group's insert failed), then lets the write thread complete it.
    /// Returns the queue's new head when it is asynchronous and this call exposed it.
    /// </summary>
    private WriteRequest? PublishGroup(WriteGroup group)
    {
        if (group.Error == null && _writeThread.InsertFailed && group.Count > 0)
        {
            group.Error = new KvException("The write was not applied: an earlier write failed to reach the memtable.");
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

    /// <summary>Holds _mutex. The families the group's batches wrote now hold data no WAL has.</summary>
    private static void MarkUnpersisted(WriteGroup group)
    {
        foreach (WriteRequest w in group.Members)
        {
            if (w.Batch!.OtherColumnFamilies is { } ids)
            {
                foreach (uint id in ids)
                {
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
