using KvEngine.Compaction;
using KvEngine.Db.Errors;
using KvEngine.Db.State;
using KvEngine.Diagnostics;
using KvEngine.Memtable;
using KvEngine.Storage;
using KvEngine.Versions;

namespace KvEngine.Db.Background;

/// <summary>
/// Picks, runs and installs flushes (RocksDB's DBImpl::FlushMemTableToOutputFile with
/// MemTableList::TryInstallMemtableFlushResults): a family's waiting memtables go into one level-0
/// table (<see cref="FlushJob"/>), recorded in the MANIFEST with the family's new log number and the
/// database's MinLogNumberToKeep, then the family's read state is renewed, the memtables released
/// and obsolete files (WALs no family needs any more) deleted before the flush is reported done.
/// <para>
/// Invariants: flushes of one family run one at a time (<see cref="ColumnFamilyData.FlushRunning"/>,
/// set by <see cref="Pick"/> and cleared when it ends), oldest memtable first, so a
/// family's immutable list is always removed from its front; with atomic flush, one flush of every
/// family with waiting memtables runs at a time and is recorded as one atomic group. A table's
/// number is a pending output until its version is installed. A family dropped meanwhile records
/// nothing: its memtables are released by the flush that ran (the drop left them to it).
/// </para>
/// <para>
/// Thread-safety: <see cref="Pick"/> runs with the database mutex held; <see cref="Run"/>,
/// <see cref="FlushAndInstall"/>, <see cref="EndFlush"/> and <see cref="BuildTable"/> take it for their
/// short steps and do the I/O outside it. Holds no state of its own besides its collaborators.
/// </para>
/// </summary>
internal sealed class FlushRunner
{
    private readonly DbMutex _mutex;
    private readonly bool _atomicFlush;
    private readonly JobContext _db;

    /// <param name="db">The database's collaborators.</param>
    /// <param name="atomicFlush">Every family with waiting memtables flushes together (<see cref="KvOptions.AtomicFlush"/>).</param>
    public FlushRunner(JobContext db, bool atomicFlush)
    {
        _db = db;
        _mutex = db.Mutex;
        _atomicFlush = atomicFlush;
    }

    /// <summary>
    /// The flushes <paramref name="families"/> (every live family when null) are waiting for now:
    /// a task that ends when every memtable waiting in them, or being written by a running flush
    /// (which records its table before it sweeps and reports), is in a table and its obsolete files
    /// are swept (or it failed, or was dropped); done at once when none waits, failed with the
    /// background error when there is one.
    /// </summary>
    public Task PendingFlushes(IReadOnlyList<ColumnFamilyData>? families)
    {
        using (_mutex.Lock())
        {
            var tasks = new List<Task>();
            foreach (ColumnFamilyData cfd in families ?? _db.Families.Live())
            {
                foreach (ImmutableMemTable imm in cfd.Immutable)
                {
                    tasks.Add(imm.Flushed.Task);
                }
                foreach (ImmutableMemTable imm in cfd.RunningFlush)
                {
                    tasks.Add(imm.Flushed.Task); // recorded but not yet swept: still to wait for
                }
            }
            if (tasks.Count == 0)
            {
                return _db.Errors.Error != null ? Task.FromException(ErrorHandler.Wrap(_db.Errors.Error)) : Task.CompletedTask;
            }
            return Task.WhenAll(tasks);
        }
    }

    /// <summary>
    /// Holds the mutex. The next flush: a family's oldest memtable (with min_write_buffer_number_to_merge
    /// above 1, every waiting one, merged into one table as RocksDB does) when enough wait or a
    /// flush was asked for and none of the family runs; with atomic flush, every family's waiting
    /// memtables together. Marks the families as flushing. Null when there is none.
    /// </summary>
    public List<(ColumnFamilyData Family, ImmutableMemTable[] Jobs)>? Pick()
    {
        _mutex.AssertHeld();
        List<(ColumnFamilyData, ImmutableMemTable[])>? result = null;
        List<ColumnFamilyData> families = _db.Families.Live();
        if (_atomicFlush)
        {
            bool due = false;
            foreach (ColumnFamilyData cfd in families)
            {
                if (cfd.FlushRunning)
                {
                    return null; // one atomic flush at a time
                }
                due |= cfd.Immutable.Count > 0 && (cfd.Immutable.Count >= cfd.MinImmutableToFlush || cfd.ForcedFlushes > 0);
            }
            if (!due)
            {
                return null;
            }
            foreach (ColumnFamilyData cfd in families)
            {
                if (cfd.Immutable.Count > 0)
                {
                    ImmutableMemTable[] picked = cfd.Immutable.ToArray();
                    cfd.StartFlush(picked);
                    (result ??= new()).Add((cfd, picked));
                }
            }
            return result;
        }
        foreach (ColumnFamilyData cfd in families)
        {
            if (cfd.Immutable.Count > 0 && !cfd.FlushRunning &&
                (cfd.Immutable.Count >= cfd.MinImmutableToFlush || cfd.ForcedFlushes > 0))
            {
                int count = cfd.Options.MinWriteBufferNumberToMerge > 1 ? cfd.Immutable.Count : 1;
                ImmutableMemTable[] picked = cfd.Immutable.GetRange(0, count).ToArray();
                cfd.StartFlush(picked);
                return [(cfd, picked)];
            }
        }
        return null;
    }

    /// <summary>
    /// Runs a picked flush on this thread: a failure becomes the background error; either way the
    /// families stop flushing and waiters are woken.
    /// </summary>
    public void Run(List<(ColumnFamilyData Family, ImmutableMemTable[] Jobs)> jobs)
    {
        _mutex.AssertNotHeld();
        try
        {
            FlushAndInstall(jobs);
        }
        catch (Exception e) when (e is IOException or KvException or UnauthorizedAccessException)
        {
            using (_mutex.Lock())
            {
                _db.Errors.SetBackgroundError(e, BackgroundJobKind.Flush);
            }
        }
        catch (OperationCanceledException)
        {
            // The database is closing (its token ended a wait for the rate limiter): the
            // memtables stay unflushed, in the WAL, and Close fails their waiters.
        }
        finally
        {
            bool released = false;
            using (_mutex.Lock())
            {
                foreach ((ColumnFamilyData cfd, ImmutableMemTable[] _) in jobs)
                {
                    released |= EndFlushLocked(cfd);
                }
                _mutex.PulseAll(); // a resume waits for a failed flush to finish
            }
            if (released)
            {
                _db.Sweeper.TrySweep(); // the dropped family's files were pinned until now
            }
        }
    }

    /// <summary>
    /// A flush of <paramref name="cfd"/> that <see cref="FlushAndInstall"/> ran outside
    /// <see cref="Run"/> ended (done or failed): the family stops flushing, waiters are woken, and a
    /// family dropped meanwhile has its memory released and its files swept.
    /// </summary>
    public void EndFlush(ColumnFamilyData cfd)
    {
        bool released;
        using (_mutex.Lock())
        {
            released = EndFlushLocked(cfd);
            _mutex.PulseAll();
        }
        if (released)
        {
            _db.Sweeper.TrySweep();
        }
    }

    /// <summary>
    /// Holds the mutex. A flush of <paramref name="cfd"/> ended (done or failed). A family dropped
    /// meanwhile left its memory to this flush (DropColumnFamily): released here; true then, and
    /// the caller sweeps its files once out of the lock.
    /// </summary>
    private bool EndFlushLocked(ColumnFamilyData cfd)
    {
        _mutex.AssertHeld();
        cfd.EndFlush();
        if (!cfd.IsDropped)
        {
            return false;
        }
        cfd.ReleaseDroppedMemory();
        return true;
    }

    /// <summary>
    /// Writes, for each family of <paramref name="jobs"/>, its oldest waiting memtables (oldest
    /// first, the front of its list) into one level-0 table, and records the tables with each
    /// family's new log number (that of the newest memtable flushed) in one MANIFEST write: an
    /// atomic group when several families flush together (atomic flush). With several live
    /// families a last edit records MinLogNumberToKeep, below which no WAL is needed. A family
    /// dropped meanwhile records nothing; its memtables are simply released.
    /// </summary>
    public void FlushAndInstall(IReadOnlyList<(ColumnFamilyData Family, ImmutableMemTable[] Jobs)> jobs)
    {
        using System.Diagnostics.Activity? activity = DbActivities.Start(DbActivities.Flush, _db.Dir);
        try
        {
            FlushAndInstallTraced(jobs, activity);
        }
        catch (Exception e)
        {
            DbActivities.Failed(activity, e);
            throw;
        }
    }

    private void FlushAndInstallTraced(IReadOnlyList<(ColumnFamilyData Family, ImmutableMemTable[] Jobs)> jobs, System.Diagnostics.Activity? activity)
    {
        _mutex.AssertNotHeld();
        long started = System.Diagnostics.Stopwatch.GetTimestamp();
        long jobId = _db.Telemetry.NextJobId();
        int memCount = 0;
        long memBytes = 0;
        foreach ((ColumnFamilyData _, ImmutableMemTable[] list) in jobs)
        {
            foreach (ImmutableMemTable job in list)
            {
                memCount++;
                memBytes += job.Mem.ApproximateMemoryUsage;
            }
        }
        _db.Telemetry.FlushStarted(jobId, memCount, memBytes);
        if (activity != null)
        {
            activity.SetTag("kvengine.job_id", jobId);
            activity.SetTag("kvengine.flush.column_families", jobs.Count);
            activity.SetTag("kvengine.flush.memtables", memCount);
            activity.SetTag("kvengine.flush.memtable_bytes", memBytes);
        }
        var metas = new FileMetaData?[jobs.Count];
        var dropped = new bool[jobs.Count]; // the family was dropped meanwhile: its table is not recorded
        try
        {
            for (int i = 0; i < jobs.Count; i++)
            {
                (ColumnFamilyData cfd, ImmutableMemTable[] list) = jobs[i];
                MemTable[] mems = Array.ConvertAll(list, static j => j.Mem);
                FileMetaData? meta = metas[i] = BuildTable(cfd, mems);
                if (meta != null && FlushJob.Tombstones(mems) is { IsEmpty: false } tombstones)
                {
                    ReadState pinned = cfd.AcquireReadState();
                    try
                    {
                        meta.CompensatedRangeDeletionSize = RangeDeletionCompensation.Estimate(
                            pinned.Version, cfd.Tables, 0, tombstones, 0, tombstones.Count, null, null);
                    }
                    finally
                    {
                        pinned.Unref();
                    }
                }
            }
            // An atomic group is all or nothing: a family dropped while the tables were written
            // must not take the other families' tables with it, so the group is recorded again
            // without it (the dropped family's tables are unnamed: the next sweep deletes them).
            while (FlushEdits(jobs, metas, dropped) is { } edits)
            {
                try
                {
                    _db.Versions.LogAndApply(edits);
                    break;
                }
                catch (ColumnFamilyDroppedException)
                {
                    bool any = false;
                    for (int i = 0; i < jobs.Count; i++)
                    {
                        if (!dropped[i] && jobs[i].Family.Versions.IsDropped)
                        {
                            dropped[i] = any = true;
                        }
                    }
                    if (!any)
                    {
                        throw;
                    }
                }
            }
        }
        finally
        {
            using (_mutex.Lock())
            {
                foreach (FileMetaData? meta in metas)
                {
                    if (meta != null)
                    {
                        _db.PendingOutputs.Remove(meta.Number);
                    }
                }
            }
        }
        // The versions holding the new tables, pinned until they are opened below (a table a
        // compaction made obsolete meanwhile would otherwise be opened into the cache after its eviction).
        var opening = new ReadState?[jobs.Count];
        using (_mutex.Lock())
        {
            for (int i = 0; i < jobs.Count; i++)
            {
                (ColumnFamilyData cfd, ImmutableMemTable[] list) = jobs[i];
                cfd.Immutable.RemoveRange(0, list.Length);
                cfd.ForcedFlushes = Math.Max(0, cfd.ForcedFlushes - list.Length);
                if (!cfd.IsDropped)
                {
                    cfd.InstallReadState();
                    if (metas[i] != null && !dropped[i])
                    {
                        opening[i] = cfd.AcquireReadState();
                    }
                }
                if (cfd.Immutable.Count == 0)
                {
                    cfd.HasUnpersistedWrites = false;
                }
            }
            _mutex.PulseAll();
        }
        long bytes = 0;
        ulong firstNumber = 0;
        try
        {
            foreach ((ColumnFamilyData cfd, ImmutableMemTable[] list) in jobs)
            {
                foreach (ImmutableMemTable job in list)
                {
                    if (!job.Mem.Unref())
                    {
                        using (_mutex.Lock())
                        {
                            cfd.AddFlushedButPinned(job.Mem); // a reader still holds it
                        }
                    }
                }
            }
        }
        finally
        {
            // The new tables are opened once the memtables they replace are released, not before:
            // the flush's end is the process's high-water mark (a full memtable plus the one
            // filling), and a table reader's filter and index (~0.9 MB for a 64 MiB memtable's
            // table) need not add to it. A reader that meets a table first in between opens it itself.
            for (int i = 0; i < jobs.Count; i++)
            {
                if (opening[i] is { } state)
                {
                    try
                    {
                        PreOpenTable(jobs[i].Family, metas[i]!);
                    }
                    finally
                    {
                        state.Unref();
                    }
                }
            }
        }
        TimeSpan elapsed = System.Diagnostics.Stopwatch.GetElapsedTime(started);
        for (int i = 0; i < jobs.Count; i++)
        {
            // Counted before the flush is reported done, so a caller of Flush sees its bytes.
            long tableBytes = metas[i] == null || dropped[i] ? 0 : (long)metas[i]!.FileSize;
            jobs[i].Family.CompactionStats.AddFlush(tableBytes, (long)elapsed.TotalMicroseconds);
            bytes += tableBytes;
            firstNumber = firstNumber == 0 && metas[i] != null ? metas[i]!.Number : firstNumber;
        }
        _db.Counters.AddFlush(bytes);
        _db.Telemetry.FlushFinished(jobId, memCount, firstNumber, bytes, elapsed);
        activity?.SetTag("kvengine.flush.file_number", firstNumber);
        activity?.SetTag("kvengine.flush.table_bytes", bytes);
        try
        {
            // Before the flush is reported done: a caller of Flush finds the files it made obsolete
            // (its WALs, tables nothing reads any more) already gone.
            _db.Sweeper.Sweep(atOpen: false);
        }
        finally
        {
            // The tables are recorded whatever the sweep did (it is retried at the next one).
            foreach ((ColumnFamilyData _, ImmutableMemTable[] list) in jobs)
            {
                foreach (ImmutableMemTable job in list)
                {
                    job.Flushed.TrySetResult();
                }
            }
        }
    }

    /// <summary>
    /// Writes <paramref name="mems"/> into a new table of <paramref name="cfd"/> (<see cref="FlushJob"/>),
    /// respecting the snapshots live now. The file number stays in the pending outputs (protected
    /// from deletion) until the caller removes it; a failed job removes it and its file.
    /// </summary>
    public FileMetaData? BuildTable(ColumnFamilyData cfd, MemTable[] mems)
    {
        // The snapshots to respect are those live now. One taken later cannot need a version
        // this flush drops: the memtables became immutable at a switch made by a write-group
        // leader with no group still inserting (MemTableSwitcher.MakeRoom waits for pipelined inserts),
        // so every entry in them was published, and a later snapshot reads the last published
        // sequence (under the list's lock), which is at or above all of them; for it, as for
        // a plain read, only the newest version of each key matters, and that one is always
        // kept. At recovery no snapshot exists yet.
        var job = new FlushJob(_db.Dir, _db.Fs, cfd, mems, _db.Snapshots.GetSequences(), _db.PendingOutputs.NewFileNumber, _db.PendingOutputs.Remove,
            _db.WriteLimit);
        return job.Run();
    }

    /// <summary>
    /// Opens a new level-0 table in the table cache as soon as its memtables are released (RocksDB's
    /// BuildTable opens its output through the table cache before it is installed; see
    /// FlushAndInstall for why this comes after), so that the reads after a flush do not pay for
    /// (and allocate) the open. Best effort: a failure is left to the first reader, which reports
    /// it as it would have anyway.
    /// </summary>
    private static void PreOpenTable(ColumnFamilyData cfd, FileMetaData meta)
    {
        try
        {
            cfd.Tables.Get(meta, 0);
        }
        catch (Exception e) when (e is IOException or KvException)
        {
        }
    }

    /// <summary>
    /// The MANIFEST edits recording a flush's tables for the families not
    /// <paramref name="dropped"/> (an atomic group when several), with the MinLogNumberToKeep edit;
    /// null when every family was dropped.
    /// </summary>
    private List<VersionEdit>? FlushEdits(IReadOnlyList<(ColumnFamilyData Family, ImmutableMemTable[] Jobs)> jobs, FileMetaData?[] metas, bool[] dropped)
    {
        int count = 0;
        foreach (bool d in dropped)
        {
            count += d ? 0 : 1;
        }
        if (count == 0)
        {
            return null;
        }
        var edits = new List<VersionEdit>(count + 1);
        for (int i = 0; i < jobs.Count; i++)
        {
            if (dropped[i])
            {
                continue;
            }
            var edit = new VersionEdit { ColumnFamily = jobs[i].Family.Id, LogNumber = jobs[i].Jobs[^1].NextLogNumber };
            if (metas[i] is { } meta)
            {
                edit.AddFile(0, meta);
            }
            if (count > 1)
            {
                edit.AtomicGroupRemaining = (uint)(count - 1 - edits.Count);
            }
            edits.Add(edit);
        }
        if (_db.Families.MinLogNumberToKeepEdit(edits) is { } minLog)
        {
            edits.Add(minLog);
        }
        return edits;
    }
}
