using KvEngine.Format;

using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Db;

/// <summary>The write path: group commit, WAL append, memtable insert, memtable switches.</summary>
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

    // The current group; only the leader touches these, between PrepareGroup and FinishGroup.
    private readonly List<WriteRequest> _group = new();
    private ulong _groupFirstSequence;
    private int _groupCount;
    private Exception? _groupError;

    public void Write(WriteBatch batch, WriteOptions options)
    {
        ThrowIfDisposed();
        ValidateWrite(batch, options);
        WriteSync(batch, options.Sync, options.DisableWal, force: false);
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

    /// <summary>A synchronous write (or, with <paramref name="force"/>, a memtable switch).</summary>
    private void WriteSync(WriteBatch? batch, bool sync, bool disableWal, bool force)
    {
        if (!force)
        {
            ThrowIfDisposed(); // a forced switch is also how Dispose persists unlogged writes
        }
        WriteRequest request = t_request ??= new WriteRequest();
        request.Reset(batch, sync, disableWal, force);
        t_request = null; // while in use; a request abandoned in the queue (thread interrupt) is never reused
        bool lead;
        lock (_mutex)
        {
            Enqueue(request);
            lead = _queueHead == request;
            if (lead)
            {
                PrepareGroup(request);
            }
        }
        if (!lead)
        {
            lead = AwaitTurn(request);
        }
        if (lead)
        {
            LeadGroups(request);
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
    private bool AwaitTurn(WriteRequest request)
    {
        SpinUntilTurn(request);
        lock (_mutex)
        {
            while (!request.Done && _queueHead != request)
            {
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
            if (request.Done)
            {
                return false;
            }
            PrepareGroup(request);
            return true;
        }
    }

    public ValueTask WriteAsync(WriteBatch batch, WriteOptions options, CancellationToken cancellationToken)
    {
        ThrowIfDisposed();
        cancellationToken.ThrowIfCancellationRequested();
        ValidateWrite(batch, options);
        WriteRequest request = WriteRequest.ForAsync(batch, options);
        lock (_mutex)
        {
            Enqueue(request);
            if (_queueHead != request)
            {
                // A leader (sync or async) is running: it will commit this request too.
                return new ValueTask(request.Completion!.Task);
            }
            PrepareGroup(request);
        }
        LeadGroups(request);
        return request.Error != null ? ValueTask.FromException(Wrap(request.Error)) : ValueTask.CompletedTask;
    }

    /// <summary>
    /// Executes the group prepared for <paramref name="leader"/>, then leads following groups whose
    /// front request is asynchronous (no thread waits to lead them); a synchronous front request is
    /// woken to lead its own group.
    /// </summary>
    private void LeadGroups(WriteRequest leader)
    {
        while (true)
        {
            ExecuteGroup(leader);
            lock (_mutex)
            {
                FinishGroup();
                WriteRequest? next = _queueHead;
                if (next is { Completion: not null })
                {
                    PrepareGroup(next);
                    leader = next;
                    continue;
                }
                if (_syncWaiters > 0)
                {
                    Monitor.PulseAll(_mutex);
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

    /// <summary>Holds _mutex. Makes room, then takes followers into the leader's group.</summary>
    private void PrepareGroup(WriteRequest leader)
    {
        _group.Clear();
        _group.Add(leader);
        _groupError = null;
        try
        {
            MakeRoomForWrite(leader.ForceMemTableSwitch);
        }
        catch (Exception e) when (e is IOException or KvException or ObjectDisposedException)
        {
            _groupError = e;
            return;
        }
        if (leader.Batch != null)
        {
            long bytes = leader.Batch.ApproximateSize;
            long limit = bytes <= 128 << 10 ? bytes + (128 << 10) : MaxGroupBytes;
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
                _group.Add(w);
            }
        }
        _groupFirstSequence = _versions.LastSequence + 1;
    }

    /// <summary>Outside _mutex: one WAL record (and at most one fsync) for the group, then the memtable.</summary>
    private void ExecuteGroup(WriteRequest leader)
    {
        if (_groupError != null || leader.Batch == null)
        {
            return;
        }
        try
        {
            WriteBatch batch = leader.Batch;
            if (_group.Count > 1)
            {
                _groupBatch.Clear();
                foreach (WriteRequest w in _group)
                {
                    _groupBatch.Append(w.Batch!);
                }
                batch = _groupBatch;
            }
            batch.Sequence = _groupFirstSequence;
            if (!leader.DisableWal)
            {
                _log!.AddRecord(batch.Data);
                _logFile!.Flush();
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
                if (_group.Count > 1)
                {
                    stats.Record(Ticker.WriteDoneByOther, _group.Count - 1);
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
            if (_group.Count > 1 && _options.AllowConcurrentMemtableWrite)
            {
                InsertGroupConcurrently();
            }
            else
            {
                var inserter = new MemTableInserter(_mem, _groupFirstSequence, concurrent: false);
                batch.Iterate(ref inserter);
            }
            _groupCount = batch.Count;
        }
        catch (Exception e)
        {
            // Whatever failed, the WAL may end in a partial record and the memtable may hold part
            // of the group under sequence numbers that were never published: accept no more
            // writes (RocksDB's background error). The group still completes, with the error, so
            // the queue never stalls behind it.
            _groupError = e;
            lock (_mutex)
            {
                SetBackgroundError(e);
            }
        }
    }

    /// <summary>Holds _mutex. Publishes the group's sequence numbers and completes its members.</summary>
    private void FinishGroup()
    {
        WriteRequest leader = _group[0];
        if (_groupError == null && leader.Batch != null && _groupCount > 0)
        {
            _versions.SetLastSequence(_groupFirstSequence + (ulong)_groupCount - 1);
            if (leader.DisableWal)
            {
                _hasUnpersistedWrites = true;
            }
        }
        _groupCount = 0;
        foreach (WriteRequest w in _group)
        {
            _queueHead = w.Next;
            w.Next = null;
            Complete(w, _groupError);
        }
        if (_queueHead == null)
        {
            _queueTail = null;
        }
        _group.Clear();
    }

    /// <summary>
    /// Holds _mutex. Applies the level-0 write stalls (unless auto compaction is off): at
    /// Level0SlowdownWritesTrigger files the group waits 1 ms once (a fixed delay standing in for
    /// RocksDB's delayed_write_rate), at Level0StopWritesTrigger it waits until a compaction brings
    /// the count down. Then switches the memtable when full (or forced), waiting while too many are
    /// unflushed. Writers wait, never fail, unless a background error stops the database.
    /// </summary>
    private void MakeRoomForWrite(bool force)
    {
        bool delayed = false;
        while (true)
        {
            if (_backgroundError != null)
            {
                throw new KvException("The database refuses writes after a background error: " + _backgroundError.Message, _backgroundError);
            }
            if (IsDisposed && !force)
            {
                throw new ObjectDisposedException(nameof(KvDb));
            }
            if (!force && !_compactionOptions.DisableAutoCompactions)
            {
                int level0 = _versions.Current.NumFiles(0);
                if (level0 >= _compactionOptions.Level0StopWritesTrigger)
                {
                    long t0 = System.Diagnostics.Stopwatch.GetTimestamp();
                    Monitor.Wait(_mutex, 100);
                    _counters.AddStall((long)System.Diagnostics.Stopwatch.GetElapsedTime(t0).TotalMicroseconds);
                    continue;
                }
                if (level0 >= _compactionOptions.Level0SlowdownWritesTrigger && !delayed)
                {
                    delayed = true;
                    long t0 = System.Diagnostics.Stopwatch.GetTimestamp();
                    Monitor.Wait(_mutex, 1);
                    _counters.AddStall((long)System.Diagnostics.Stopwatch.GetElapsedTime(t0).TotalMicroseconds);
                    continue;
                }
            }
            if (force ? _mem.IsEmpty : _mem.ApproximateMemoryUsage < _options.WriteBufferSize)
            {
                return;
            }
            if (_immutable.Count >= _options.MaxWriteBufferNumber - 1)
            {
                // Too many memtables wait for flushing: writers stall (never fail) until one is done.
                Monitor.Wait(_mutex);
                continue;
            }
            // Later writes, Sync ones included, go to the new WAL only: the old one must be durable
            // first, or a power loss could keep a synced write in the new log while losing older
            // unsynced ones in the old (a hole, not a prefix). Pebble also syncs the WAL it rotates away from.
            try
            {
                _logFile!.Sync();
            }
            catch (IOException e)
            {
                SetBackgroundError(e);
                throw;
            }
            ulong newLog = _versions.NewFileNumber();
            OpenNewLog(newLog);
            _logNumber = newLog;
            _immutable.Add(new ImmutableMemTable(_mem, newLog));
            _mem = NewMemTable();
            InstallReadState();
            _backgroundWake.Release();
            if (force)
            {
                return;
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
