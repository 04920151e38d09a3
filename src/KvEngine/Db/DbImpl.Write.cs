using KvEngine.Format;

using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Db;

/// <summary>The write path: group commit, WAL append, memtable insert, memtable switches.</summary>
internal sealed partial class DbImpl
{
    /// <summary>A group grows to at most this many bytes (RocksDB: 1 MiB, less for a small leader).</summary>
    private const int MaxGroupBytes = 1 << 20;

    public void Write(WriteBatch batch, WriteOptions options)
    {
        ThrowIfDisposed();
        ValidateWrite(batch, options);
        var request = new WriteRequest(batch, options.Sync, options.DisableWal, forceMemTableSwitch: false, isAsync: false);
        lock (_mutex)
        {
            _writers.AddLast(request);
            while (!request.Done && _writers.First!.Value != request)
            {
                Monitor.Wait(_mutex);
            }
        }
        if (!request.Done)
        {
            LeadGroups(request);
        }
        if (request.Error != null)
        {
            throw Wrap(request.Error);
        }
    }

    public ValueTask WriteAsync(WriteBatch batch, WriteOptions options, CancellationToken cancellationToken)
    {
        ThrowIfDisposed();
        cancellationToken.ThrowIfCancellationRequested();
        ValidateWrite(batch, options);
        var request = new WriteRequest(batch, options.Sync, options.DisableWal, forceMemTableSwitch: false, isAsync: true);
        bool lead;
        lock (_mutex)
        {
            _writers.AddLast(request);
            lead = _writers.First!.Value == request;
        }
        if (!lead)
        {
            // A leader (sync or async) already runs: it will commit this request too.
            return new ValueTask(request.Completion!.Task);
        }
        LeadGroups(request);
        return request.Error != null ? ValueTask.FromException(Wrap(request.Error)) : ValueTask.CompletedTask;
    }

    /// <summary>
    /// Refuses a request before it joins the writer queue: one that failed inside a group (e.g. a
    /// disposed batch) would never be dequeued, and every later writer would wait behind it.
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
    /// Runs as leader for the group starting at <paramref name="first"/>, then for following groups
    /// whose front request is asynchronous (no thread waits to lead them); a synchronous front
    /// request is woken to lead its own group.
    /// </summary>
    private void LeadGroups(WriteRequest first)
    {
        WriteRequest? leader = first;
        while (leader != null)
        {
            leader = CommitGroup(leader);
        }
    }

    /// <summary>Commits one group; returns the asynchronous request this thread must lead next, if any.</summary>
    private WriteRequest? CommitGroup(WriteRequest leader)
    {
        var group = new List<WriteRequest>(4);
        ulong firstSequence;
        int count = 0;
        Exception? error = null;
        lock (_mutex)
        {
            try
            {
                MakeRoomForWrite(leader.ForceMemTableSwitch, leader);
            }
            catch (Exception e) when (e is IOException or KvException or ObjectDisposedException)
            {
                error = e;
            }
            group.Add(leader);
            if (error == null && leader.Batch != null)
            {
                long bytes = leader.Batch.ApproximateSize;
                long limit = bytes <= 128 << 10 ? bytes + (128 << 10) : MaxGroupBytes;
                for (LinkedListNode<WriteRequest>? n = _writers.First!.Next; n != null; n = n.Next)
                {
                    WriteRequest w = n.Value;
                    if (w.Batch == null || (w.Sync && !leader.Sync) || w.DisableWal != leader.DisableWal)
                    {
                        break;
                    }
                    bytes += w.Batch.ApproximateSize;
                    if (bytes > limit)
                    {
                        break;
                    }
                    group.Add(w);
                }
            }
            firstSequence = _versions.LastSequence + 1;
        }

        if (error == null && leader.Batch != null)
        {
            try
            {
                WriteBatch batch = leader.Batch;
                if (group.Count > 1)
                {
                    _groupBatch.Clear();
                    foreach (WriteRequest w in group)
                    {
                        _groupBatch.Append(w.Batch!);
                    }
                    batch = _groupBatch;
                }
                count = batch.Count;
                batch.Sequence = firstSequence;
                if (!leader.DisableWal)
                {
                    _log!.AddRecord(batch.Data);
                    _logFile!.Flush();
                    if (leader.Sync)
                    {
                        _logFile.Sync();
                    }
                }
                var inserter = new MemTableInserter(_mem, firstSequence);
                batch.Iterate(ref inserter);
            }
            catch (Exception e) when (e is IOException or KvException)
            {
                // The WAL may end in a partial record: accept no more writes (RocksDB's background error).
                error = e;
                lock (_mutex)
                {
                    _backgroundError ??= e;
                }
            }
        }

        lock (_mutex)
        {
            if (error == null && count > 0)
            {
                _versions.SetLastSequence(firstSequence + (ulong)count - 1);
                if (leader.DisableWal)
                {
                    _hasUnpersistedWrites = true;
                }
            }
            foreach (WriteRequest w in group)
            {
                _writers.RemoveFirst();
                Complete(w, error);
            }
            // The next leader is chosen in the same critical section that dequeued the group. Once
            // the mutex is released with an empty queue, a new asynchronous request finds itself
            // first and leads on its own thread; choosing "the front request" later could pick that
            // one too, and two leaders would write the WAL and the memtable at once.
            Monitor.PulseAll(_mutex);
            WriteRequest? next = _writers.First?.Value;
            return next is { Completion: not null } ? next : null;
        }
    }

    /// <summary>Holds _mutex. Switches the memtable when full (or forced), waiting while too many are unflushed.</summary>
    private void MakeRoomForWrite(bool force, WriteRequest request)
    {
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
            // first, or a power loss could keep a synced write there while losing older unsynced
            // ones here (a hole, not a prefix). Pebble also syncs the WAL it rotates away from.
            try
            {
                _logFile!.Sync();
            }
            catch (IOException e)
            {
                _backgroundError ??= e;
                throw;
            }
            ulong newLog = _versions.NewFileNumber();
            OpenNewLog(newLog);
            _logNumber = newLog;
            var imm = new ImmutableMemTable(_mem, newLog);
            _immutable.Add(imm);
            _mem = NewMemTable();
            InstallReadState();
            Monitor.PulseAll(_mutex);
            request.SwitchedOut = imm;
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

    /// <summary>Applies a batch's records to a memtable with consecutive sequence numbers.</summary>
    internal struct MemTableInserter : Wal.IWriteBatchHandler
    {
        private readonly Memtable.MemTable _mem;
        private ulong _sequence;

        public MemTableInserter(Memtable.MemTable mem, ulong firstSequence)
        {
            _mem = mem;
            _sequence = firstSequence;
        }

        public void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) => _mem.Add(_sequence++, ValueType.Value, key, value);

        public void Delete(ReadOnlySpan<byte> key) => _mem.Add(_sequence++, ValueType.Deletion, key, default);

        public void SingleDelete(ReadOnlySpan<byte> key) => _mem.Add(_sequence++, ValueType.SingleDeletion, key, default);

        public void DeleteRange(ReadOnlySpan<byte> beginKey, ReadOnlySpan<byte> endKey) =>
            throw new KvException("This log holds a range deletion (DeleteRange); KvEngine does not read range deletions yet.");

        public void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) =>
            throw new KvException("This log holds a merge operand; KvEngine has no merge operator.");
    }
}
