using KvEngine.Db.Background;
namespace KvEngine.Db;

/// <summary>
/// Making room for a write group (RocksDB's PreprocessWrite): level-0 stalls, memtable switches of
/// full or forced families onto a new WAL, and the WAL-size trigger that flushes families keeping
/// the oldest WAL alive. Runs under _mutex, by the group's leader.
/// </summary>
internal sealed partial class DbImpl
{
    // WALs older than the current one that may still hold unflushed data, oldest first, with their
    // sizes (guarded by _mutex), and the current WAL's bytes (added by group leaders).
    private readonly List<(ulong Number, long Bytes)> _aliveLogs = new();
    private long _currentLogBytes;

    // The delayed-write limiter, and the bytes of the last group it is charged with (under _mutex).
    private readonly WriteController _writeController;
    private long _lastGroupBytes;

    // Dropped families whose mutable memtable the next write group's leader releases (under _mutex).
    private readonly List<ColumnFamilyData> _droppedMemTables = new();

    /// <summary>
    /// Holds _mutex. Applies the level-0 write stalls of every family (unless its auto compaction
    /// is off): at Level0SlowdownWritesTrigger files the group is delayed so writes go on at
    /// <see cref="KvOptions.DelayedWriteRate"/> (<see cref="WriteController"/>, charged with the
    /// previous group's bytes as RocksDB does), at Level0StopWritesTrigger it waits until a
    /// compaction brings the count down. Then switches the memtables of the families that are full
    /// (or forced, <paramref name="forceFamilies"/>; every family when null), waiting while one of
    /// them has too many unflushed; and, with several families, of those that keep the oldest WAL
    /// alive once the WALs pass <see cref="KvOptions.MaxTotalWalSize"/> (RocksDB's SwitchWAL).
    /// Writers wait, never fail, unless a background error stops the database. A group that waited
    /// reports one write stall (log and histogram) when it goes on.
    /// </summary>
    private void MakeRoomForWrite(bool force, IReadOnlyList<ColumnFamilyData>? forceFamilies)
    {
        long stallStarted = 0;
        Diagnostics.WriteStallCause stallCause = default;
        try
        {
            MakeRoomForWrite(force, forceFamilies, ref stallStarted, ref stallCause);
        }
        finally
        {
            if (stallStarted != 0)
            {
                _telemetry.WriteStallEnded(stallCause, System.Diagnostics.Stopwatch.GetElapsedTime(stallStarted));
            }
        }
    }

    /// <summary>Holds _mutex. Notes the start of a write stall (its first wait) in <paramref name="started"/> and logs it.</summary>
    private void BeginWriteStall(Diagnostics.WriteStallCause cause, ColumnFamilyData cfd, ref long started, ref Diagnostics.WriteStallCause startedCause)
    {
        if (started == 0)
        {
            started = System.Diagnostics.Stopwatch.GetTimestamp();
            startedCause = cause;
            _telemetry.WriteStallStarted(cause, cfd.Versions.Current.NumFiles(0), cfd.Immutable.Count);
        }
    }

    private void MakeRoomForWrite(bool force, IReadOnlyList<ColumnFamilyData>? forceFamilies, ref long stallStarted, ref Diagnostics.WriteStallCause stallCause)
    {
        ReleaseDroppedMemTables();
        bool delayed = false;
        List<ColumnFamilyData>? switching = null;
        while (true)
        {
            if (_errors.Error != null && !(force && _errors.Resuming))
            {
                throw new KvException("The database refuses writes after a background error: " + _errors.Error.Message, _errors.Error);
            }
            if (IsDisposed && !force)
            {
                throw new ObjectDisposedException(nameof(KvDb));
            }
            if (!force && Level0Stall(ref delayed, ref stallStarted, ref stallCause))
            {
                continue;
            }
            switching?.Clear();
            bool forcedPending = false;
            foreach (ColumnFamilyData? cfd in _families.ById)
            {
                if (cfd == null)
                {
                    continue;
                }
                bool targeted = force && (forceFamilies == null || Contains(forceFamilies, cfd));
                // Resuming switches even an empty memtable: the current WAL may end in a torn record.
                bool full = targeted
                    ? !cfd.Mem.IsEmpty || _errors.Resuming
                    : cfd.Mem.ApproximateMemoryUsage >= cfd.Options.WriteBufferSize;
                if (targeted && !full && cfd.Immutable.Count > cfd.ForcedFlushes)
                {
                    // Nothing to switch, but every memtable waiting now must be flushed (Flush, close).
                    cfd.ForcedFlushes = cfd.Immutable.Count;
                    forcedPending = true;
                }
                if (full)
                {
                    (switching ??= new List<ColumnFamilyData>()).Add(cfd);
                }
            }
            if (switching is { Count: > 0 } && _options.AtomicFlush)
            {
                // Atomic flush: every family with data switches (and is flushed) together.
                foreach (ColumnFamilyData? cfd in _families.ById)
                {
                    if (cfd != null && !cfd.Mem.IsEmpty && !switching.Contains(cfd))
                    {
                        switching.Add(cfd);
                    }
                }
            }
            else if (!force && (switching == null || switching.Count == 0))
            {
                AddFamiliesPinningOldestWal(ref switching);
            }
            if (forcedPending)
            {
                _scheduler.Wake();
            }
            if (switching == null || switching.Count == 0)
            {
                return;
            }
            if (_writeThread.WaitForInflightInserts())
            {
                // Pipelined groups still inserted into these memtables: they may not become immutable yet.
                continue;
            }
            if (!_errors.Resuming && FindFamilyAtMemTableLimit(switching) is { } crowded)
            {
                // (A resume switches past the limit: it flushes every memtable itself before any write.)
                // Too many memtables wait for flushing: writers stall (never fail) until one is done.
                BeginWriteStall(Diagnostics.WriteStallCause.MemTableLimit, crowded, ref stallStarted, ref stallCause);
                long t0 = System.Diagnostics.Stopwatch.GetTimestamp();
                Monitor.Wait(_mutex);
                _counters.AddStall((long)System.Diagnostics.Stopwatch.GetElapsedTime(t0).TotalMicroseconds);
                continue;
            }
            SwitchMemTables(switching, force);
            if (force)
            {
                return;
            }
        }
    }

    /// <summary>
    /// Holds _mutex, by the queue's head before it prepares its group. Drops the mutable memtables
    /// of families dropped since: no group can still insert into them once no pipelined group is
    /// in flight (earlier non-pipelined groups are done, and later ones see the new family table).
    /// </summary>
    private void ReleaseDroppedMemTables()
    {
        if (_droppedMemTables.Count == 0 || _writeThread.HasInflightInserts)
        {
            return;
        }
        foreach (ColumnFamilyData cfd in _droppedMemTables)
        {
            cfd.ReleaseMutableMemTable();
        }
        _droppedMemTables.Clear();
    }

    /// <summary>Holds _mutex. True when the group waited for a family's level-0 files (the caller looks again).</summary>
    private bool Level0Stall(ref bool delayed, ref long stallStarted, ref Diagnostics.WriteStallCause stallCause)
    {
        foreach (ColumnFamilyData? cfd in _families.ById)
        {
            if (cfd == null || cfd.CompactionOptions.DisableAutoCompactions)
            {
                continue;
            }
            int level0 = cfd.Versions.Current.NumFiles(0);
            if (level0 >= cfd.CompactionOptions.Level0StopWritesTrigger)
            {
                BeginWriteStall(Diagnostics.WriteStallCause.Level0Stop, cfd, ref stallStarted, ref stallCause);
                long t0 = System.Diagnostics.Stopwatch.GetTimestamp();
                Monitor.Wait(_mutex, 100);
                _counters.AddStall((long)System.Diagnostics.Stopwatch.GetElapsedTime(t0).TotalMicroseconds);
                return true;
            }
            if (level0 >= cfd.CompactionOptions.Level0SlowdownWritesTrigger && !delayed)
            {
                delayed = true;
                TimeSpan delay = _writeController.GetDelay(Math.Max(1, _lastGroupBytes), WriteController.NowMicros());
                if (delay <= TimeSpan.Zero)
                {
                    return false;
                }
                BeginWriteStall(Diagnostics.WriteStallCause.Level0Slowdown, cfd, ref stallStarted, ref stallCause);
                long t0 = System.Diagnostics.Stopwatch.GetTimestamp();
                Monitor.Wait(_mutex, delay); // the mutex is free meanwhile; a finished compaction wakes it early
                _counters.AddStall((long)System.Diagnostics.Stopwatch.GetElapsedTime(t0).TotalMicroseconds);
                return true;
            }
        }
        return false;
    }

    private static ColumnFamilyData? FindFamilyAtMemTableLimit(List<ColumnFamilyData> families)
    {
        foreach (ColumnFamilyData cfd in families)
        {
            if (cfd.Immutable.Count >= cfd.Options.MaxWriteBufferNumber - 1)
            {
                return cfd;
            }
        }
        return null;
    }

    private static bool Contains(IReadOnlyList<ColumnFamilyData> families, ColumnFamilyData cfd)
    {
        for (int i = 0; i < families.Count; i++)
        {
            if (families[i] == cfd)
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>
    /// Holds _mutex, no group inserting. Syncs the current WAL, starts a new one, makes the
    /// memtables of <paramref name="families"/> immutable (to be flushed), and moves every family
    /// whose memtable is empty to the new WAL (in memory: RocksDB does the same, so an idle
    /// family pins no WAL).
    /// </summary>
    private void SwitchMemTables(List<ColumnFamilyData> families, bool force)
    {
        // Later writes, Sync ones included, go to the new WAL only: the old one must be durable
        // first, or a power loss could keep a synced write in the new log while losing older
        // unsynced ones in the old (a hole, not a prefix). Pebble also syncs the WAL it rotates away from.
        // Resuming abandons the old WAL instead: it may be unwritable or torn, and everything it
        // holds is in the memtables that the resume flushes before any new write is accepted.
        if (!_errors.Resuming)
        {
            try
            {
                _logFile!.Sync();
            }
            catch (IOException e)
            {
                _errors.SetBackgroundError(e, Diagnostics.BackgroundJobKind.WalWrite);
                throw;
            }
        }
        ulong newLog = _versions.NewFileNumber();
        try
        {
            OpenNewLog(newLog, abandonOld: _errors.Resuming);
        }
        catch (IOException e)
        {
            // No new WAL, or the MANIFEST could not record it (RocksDB's SwitchMemtable sets a
            // background error too): writes stop until a resume or reopen.
            _errors.SetBackgroundError(e, Diagnostics.BackgroundJobKind.MemTableSwitch);
            throw;
        }
        _aliveLogs.Add((_logNumber, Interlocked.Exchange(ref _currentLogBytes, 0)));
        _logNumber = newLog;
        foreach (ColumnFamilyData cfd in families)
        {
            cfd.Immutable.Add(new ImmutableMemTable(cfd.Mem, newLog));
            if (force)
            {
                cfd.ForcedFlushes = cfd.Immutable.Count;
            }
            cfd.Mem = cfd.NewMemTable();
            cfd.InstallReadState();
        }
        foreach (ColumnFamilyData? cfd in _families.ById)
        {
            if (cfd != null && cfd.Mem.IsEmpty && cfd.Immutable.Count == 0)
            {
                _versions.AdvanceLogNumber(cfd.Versions, newLog);
            }
        }
        _scheduler.Wake();
    }

    /// <summary>
    /// Holds _mutex. With several families, once the live WALs pass the total size limit, the
    /// families holding data in the oldest one switch (RocksDB's max_total_wal_size): otherwise a
    /// rarely written family would keep every WAL alive.
    /// </summary>
    private void AddFamiliesPinningOldestWal(ref List<ColumnFamilyData>? switching)
    {
        if (_families.ById.Length < 2)
        {
            return;
        }
        long total = Volatile.Read(ref _currentLogBytes);
        long limit = _options.MaxTotalWalSize;
        if (limit == 0)
        {
            foreach (ColumnFamilyData? cfd in _families.ById)
            {
                if (cfd != null)
                {
                    limit += cfd.Options.WriteBufferSize * cfd.Options.MaxWriteBufferNumber;
                }
            }
            limit *= 4;
        }
        foreach ((ulong _, long bytes) in _aliveLogs)
        {
            total += bytes;
        }
        if (total <= limit)
        {
            return;
        }
        // RocksDB counts the current WAL among the alive ones: one WAL past the limit switches too.
        ulong oldest = _aliveLogs.Count > 0 ? _aliveLogs[0].Number : _logNumber;
        foreach (ColumnFamilyData? cfd in _families.ById)
        {
            if (cfd != null && !cfd.Mem.IsEmpty && cfd.Versions.LogNumber <= oldest && cfd.Immutable.Count == 0)
            {
                (switching ??= new List<ColumnFamilyData>()).Add(cfd);
            }
        }
    }

    /// <summary>
    /// Holds _mutex. The smallest WAL number still needed (the current WAL, or an older one some
    /// family's log number keeps); the older WALs leave the size accounting (the sweeper deletes them).
    /// </summary>
    private ulong OldestLiveWal()
    {
        ulong minLog = Math.Min(_versions.MinLogNumberToKeep, _logNumber);
        _aliveLogs.RemoveAll(l => l.Number < minLog);
        return minLog;
    }
}
