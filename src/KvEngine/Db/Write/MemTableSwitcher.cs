using KvEngine.Db.Background;
using KvEngine.Db.Errors;
using KvEngine.Db.Logs;
using KvEngine.Db.State;
using KvEngine.Diagnostics;
using KvEngine.Versions;

namespace KvEngine.Db.Write;

/// <summary>
/// Making room for a write group (RocksDB's PreprocessWrite and SwitchMemtable): the stalls
/// (<see cref="WriteStalls"/>), then the switch of the memtables of full or forced families onto a
/// new WAL, and the total-WAL-size trigger that switches the families keeping the oldest WAL alive
/// (RocksDB's SwitchWAL). Also releases the mutable memtables of dropped families once no group
/// can still insert into them.
/// <para>
/// Invariants: a memtable becomes immutable only while no group inserts (a switch waits for the
/// write thread's in-flight inserts), and only after the WAL it was written with is synced (unless
/// a resume abandons that WAL); each immutable memtable names the WAL that follows it (its flush
/// makes every older WAL unneeded by its family); a family whose memtables are all empty moves
/// its log number to the new WAL, so an idle family pins no WAL.
/// </para>
/// <para>
/// Thread-safety: every member holds the database mutex, by the writer at the queue's head (a
/// group's leader, a forced switch, an ingestion that stopped writes). The list of dropped
/// families' memtables is guarded by the mutex; <see cref="StopAcceptingWrites"/> is a volatile flag.
/// </para>
/// </summary>
internal sealed class MemTableSwitcher
{
    private readonly DbMutex _mutex;
    private readonly KvOptions _options;
    private readonly VersionSet _versions;
    private readonly ColumnFamilySet _families;
    private readonly WalSet _wals;
    private readonly WriteThread _writeThread;
    private readonly WriteStalls _stalls;
    private readonly ErrorHandler _errors;
    private readonly BackgroundScheduler _scheduler;
    private readonly List<ColumnFamilyData> _droppedMemTables = new();
    private volatile bool _closed;
    private volatile bool _switchesClosed;

    public MemTableSwitcher(
        DbMutex mutex, KvOptions options, VersionSet versions, ColumnFamilySet families, WalSet wals,
        WriteThread writeThread, WriteStalls stalls, ErrorHandler errors, BackgroundScheduler scheduler)
    {
        _mutex = mutex;
        _options = options;
        _versions = versions;
        _families = families;
        _wals = wals;
        _writeThread = writeThread;
        _stalls = stalls;
        _errors = errors;
        _scheduler = scheduler;
    }

    /// <summary>The database is closing: from now on only forced switches (the close's flush) make room.</summary>
    public void StopAcceptingWrites() => _closed = true;

    /// <summary>
    /// The close's own flush is done: forced switches (a Flush racing the close) fail too, so no
    /// memtable becomes immutable once no flush will run. A switch waiting for room sees it when
    /// the close wakes the mutex's waiters.
    /// </summary>
    public void StopAcceptingSwitches() => _switchesClosed = true;

    /// <summary>
    /// Holds the mutex. <paramref name="cfd"/> was dropped: the next group's leader releases its
    /// mutable memtable once no pipelined group can still insert into it.
    /// </summary>
    public void AddDropped(ColumnFamilyData cfd)
    {
        _mutex.AssertHeld();
        _droppedMemTables.Add(cfd);
    }

    /// <summary>
    /// Holds the mutex. Applies the level-0 stalls (unless <paramref name="force"/>), then switches
    /// the memtables of the families that are full (or forced, <paramref name="forceFamilies"/>;
    /// every family when null), waiting while one of them has too many unflushed; and, with
    /// several families, of those that keep the oldest WAL alive once the WALs pass
    /// <see cref="KvOptions.MaxTotalWalSize"/>. Writers wait, never fail, unless a background
    /// error stops the database (<see cref="KvException"/>) or it closed
    /// (<see cref="ObjectDisposedException"/>). A group that waited reports one write stall.
    /// </summary>
    public void MakeRoom(bool force, IReadOnlyList<ColumnFamilyData>? forceFamilies)
    {
        _mutex.AssertHeld();
        WriteStall stall = default;
        try
        {
            MakeRoomOrWait(force, forceFamilies, ref stall);
        }
        finally
        {
            _stalls.End(stall);
        }
    }

    private void MakeRoomOrWait(bool force, IReadOnlyList<ColumnFamilyData>? forceFamilies, ref WriteStall stall)
    {
        ReleaseDroppedMemTables();
        bool delayed = false;
        List<ColumnFamilyData>? switching = null;
        while (true)
        {
            if (_errors.Error != null && !(force && _errors.Resuming))
            {
                throw new KvWriteStoppedException("The database refuses writes after a background error: " + _errors.Error.Message, _errors.Error);
            }
            if ((_closed && !force) || _switchesClosed)
            {
                throw new ObjectDisposedException(nameof(KvDb));
            }
            if (!force && _stalls.Level0Stall(ref delayed, ref stall))
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
                    : cfd.Mem.IsFull(cfd.Options.WriteBufferSize);
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
                _stalls.WaitForMemTableLimit(crowded, ref stall);
                continue;
            }
            Switch(switching, force);
            if (force)
            {
                return;
            }
        }
    }

    /// <summary>
    /// Holds the mutex, by the queue's head before it prepares its group. Drops the mutable memtables
    /// of families dropped since: no group can still insert into them once no pipelined group is
    /// in flight (earlier non-pipelined groups are done, and later ones see the new family table).
    /// </summary>
    private void ReleaseDroppedMemTables()
    {
        _mutex.AssertHeld();
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
    /// Holds the mutex, no group inserting. Syncs the current WAL, starts a new one, makes the
    /// memtables of <paramref name="families"/> immutable (to be flushed), and moves every family
    /// whose memtable is empty to the new WAL (in memory: RocksDB does the same, so an idle
    /// family pins no WAL).
    /// </summary>
    private void Switch(List<ColumnFamilyData> families, bool force)
    {
        _mutex.AssertHeld();
        // Later writes, Sync ones included, go to the new WAL only: the old one must be durable
        // first, or a power loss could keep a synced write in the new log while losing older
        // unsynced ones in the old (a hole, not a prefix). Pebble also syncs the WAL it rotates away from.
        // Resuming abandons the old WAL instead: it may be unwritable or torn, and everything it
        // holds is in the memtables that the resume flushes before any new write is accepted.
        if (!_errors.Resuming)
        {
            try
            {
                _wals.SyncCurrent();
            }
            catch (IOException e)
            {
                _errors.SetBackgroundError(e, BackgroundJobKind.WalWrite);
                throw;
            }
        }
        ulong newLog = _versions.NewFileNumber();
        try
        {
            _wals.Roll(newLog, abandonOld: _errors.Resuming);
        }
        catch (IOException e)
        {
            // No new WAL, or the MANIFEST could not record it (RocksDB's SwitchMemtable sets a
            // background error too): writes stop until a resume or reopen.
            _errors.SetBackgroundError(e, BackgroundJobKind.MemTableSwitch);
            throw;
        }
        foreach (ColumnFamilyData cfd in families)
        {
            cfd.Immutable.Add(new ImmutableMemTable(cfd.Mem, newLog));
            if (force)
            {
                cfd.ForcedFlushes = cfd.Immutable.Count;
            }
            cfd.Mem = cfd.NewMemTable();
            cfd.Mem.EarliestSequence = _writeThread.LastAllocatedSequence + 1;
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
    /// Holds the mutex. With several families, once the live WALs pass the total size limit, the
    /// families holding data in the oldest one switch (RocksDB's max_total_wal_size): otherwise a
    /// rarely written family would keep every WAL alive.
    /// </summary>
    private void AddFamiliesPinningOldestWal(ref List<ColumnFamilyData>? switching)
    {
        _mutex.AssertHeld();
        if (_families.ById.Length < 2)
        {
            return;
        }
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
        if (_wals.TotalBytes() <= limit)
        {
            return;
        }
        // RocksDB counts the current WAL among the alive ones: one WAL past the limit switches too.
        ulong oldest = _wals.OldestNumber;
        foreach (ColumnFamilyData? cfd in _families.ById)
        {
            if (cfd != null && !cfd.Mem.IsEmpty && cfd.Versions.LogNumber <= oldest && cfd.Immutable.Count == 0)
            {
                (switching ??= new List<ColumnFamilyData>()).Add(cfd);
            }
        }
    }
}
