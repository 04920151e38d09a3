using KvEngine.Compaction;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Versions;
using KvEngine.Memtable;
using KvEngine.RangeDel;
using KvEngine.Storage;
using KvEngine.Table;

using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Db;

/// <summary>Flushing memtables into level-0 tables and deleting obsolete files.</summary>
internal sealed partial class DbImpl
{
    /// <summary>Flushes the memtables of <paramref name="families"/> (every family when null) and waits for the tables.</summary>
    public void Flush(IReadOnlyList<ColumnFamilyData>? families = null)
    {
        ThrowIfDisposed();
        ThrowIfReadOnly("Flush");
        FlushCore(families, wait: true);
    }

    /// <summary>Switches the families' memtables (serialized with writes) and, when asked, waits for their flush.</summary>
    private void FlushCore(IReadOnlyList<ColumnFamilyData>? families, bool wait)
    {
        if (_options.AtomicFlush)
        {
            families = null; // atomic flush: every family with data goes into tables together
        }
        WriteSync(batch: null, sync: false, disableWal: false, force: true, families);
        Task pending = PendingFlushes(families);
        if (wait)
        {
            pending.GetAwaiter().GetResult();
        }
    }

    public async ValueTask FlushAsync(IReadOnlyList<ColumnFamilyData>? families, CancellationToken cancellationToken)
    {
        ThrowIfDisposed();
        ThrowIfReadOnly("Flush");
        cancellationToken.ThrowIfCancellationRequested();
        FlushCore(families, wait: false);
        await PendingFlushes(families).WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    private Task PendingFlushes(IReadOnlyList<ColumnFamilyData>? families)
    {
        lock (_mutex)
        {
            var tasks = new List<Task>();
            foreach (ColumnFamilyData cfd in families ?? LiveFamilies())
            {
                foreach (ImmutableMemTable imm in cfd.Immutable)
                {
                    tasks.Add(imm.Flushed.Task);
                }
            }
            if (tasks.Count == 0)
            {
                return _errors.Error != null ? Task.FromException(Wrap(_errors.Error)) : Task.CompletedTask;
            }
            return Task.WhenAll(tasks);
        }
    }

    /// <summary>
    /// Opens a new level-0 table in the table cache before any reader meets it (as RocksDB's
    /// BuildTable opens its output through the table cache), so that the reads after a flush do not
    /// pay for (and allocate) the open. Best effort: a failure is left to the first reader, which
    /// reports it as it would have anyway.
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
    /// Writes, for each family of <paramref name="jobs"/>, its oldest waiting memtables (oldest
    /// first, the front of its list) into one level-0 table, and records the tables with each
    /// family's new log number (that of the newest memtable flushed) in one MANIFEST write: an
    /// atomic group when several families flush together (atomic flush). With several live
    /// families a last edit records MinLogNumberToKeep, below which no WAL is needed. A family
    /// dropped meanwhile records nothing; its memtables are simply released.
    /// </summary>
    private void FlushImmutable(IReadOnlyList<(ColumnFamilyData Family, ImmutableMemTable[] Jobs)> jobs)
    {
        long started = System.Diagnostics.Stopwatch.GetTimestamp();
        long jobId = _telemetry.NextJobId();
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
        _telemetry.FlushStarted(jobId, memCount, memBytes);
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
                    _versions.LogAndApply(edits);
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
            for (int i = 0; i < jobs.Count; i++)
            {
                if (metas[i] is { } meta && !dropped[i])
                {
                    PreOpenTable(jobs[i].Family, meta);
                }
            }
        }
        finally
        {
            lock (_mutex)
            {
                foreach (FileMetaData? meta in metas)
                {
                    if (meta != null)
                    {
                        _pendingOutputs.Remove(meta.Number);
                    }
                }
            }
        }
        lock (_mutex)
        {
            foreach ((ColumnFamilyData cfd, ImmutableMemTable[] list) in jobs)
            {
                cfd.Immutable.RemoveRange(0, list.Length);
                cfd.ForcedFlushes = Math.Max(0, cfd.ForcedFlushes - list.Length);
                if (!cfd.IsDropped)
                {
                    cfd.InstallReadState();
                }
                if (cfd.Immutable.Count == 0)
                {
                    cfd.HasUnpersistedWrites = false;
                }
            }
            Monitor.PulseAll(_mutex);
        }
        long bytes = 0;
        ulong firstNumber = 0;
        foreach ((ColumnFamilyData cfd, ImmutableMemTable[] list) in jobs)
        {
            foreach (ImmutableMemTable job in list)
            {
                job.Mem.Unref();
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
        _counters.AddFlush(bytes);
        _telemetry.FlushFinished(jobId, memCount, firstNumber, bytes, elapsed);
        try
        {
            // Before the flush is reported done: a caller of Flush finds the files it made obsolete
            // (its WALs, tables nothing reads any more) already gone.
            DeleteObsoleteFiles(atOpen: false);
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
        if (MinLogNumberToKeepEdit(edits) is { } minLog)
        {
            edits.Add(minLog);
        }
        return edits;
    }

    /// <summary>
    /// With several live families, the edit that records MinLogNumberToKeep after
    /// <paramref name="familyEdits"/>: the smallest log number any live family will have once they
    /// apply (families' in-memory log numbers included); null with one family, whose own log
    /// number says the same.
    /// </summary>
    private VersionEdit? MinLogNumberToKeepEdit(List<VersionEdit> familyEdits)
    {
        List<ColumnFamilyData> live = LiveFamilies();
        if (live.Count < 2)
        {
            return null;
        }
        ulong min = ulong.MaxValue;
        foreach (ColumnFamilyData cfd in live)
        {
            ulong log = cfd.Versions.LogNumber;
            foreach (VersionEdit e in familyEdits)
            {
                if (e.ColumnFamily == cfd.Id && e.HasLogNumber)
                {
                    log = Math.Max(log, e.LogNumber);
                }
            }
            min = Math.Min(min, log);
        }
        return new VersionEdit { MinLogNumberToKeep = min };
    }

    /// <summary>Writes one memtable to a new level-0 table (recovery); see <see cref="FlushJob"/>.</summary>
    private FileMetaData? BuildTable(ColumnFamilyData cfd, MemTable mem) => BuildTable(cfd, [mem]);

    /// <summary>
    /// Writes <paramref name="mems"/> into a new table of <paramref name="cfd"/> (<see cref="FlushJob"/>),
    /// respecting the snapshots live now. The file number stays in the pending outputs (protected
    /// from deletion) until the caller removes it; a failed job removes it and its file.
    /// </summary>
    private FileMetaData? BuildTable(ColumnFamilyData cfd, MemTable[] mems)
    {
        // The snapshots to respect are those live now. One taken later cannot need a version
        // this flush drops: the memtables became immutable at a switch made by a write-group
        // leader with no group still inserting (MakeRoomForWrite waits for pipelined inserts),
        // so every entry in them was published, and a later snapshot reads the last published
        // sequence (under the list's lock), which is at or above all of them; for it, as for
        // a plain read, only the newest version of each key matters, and that one is always
        // kept. At recovery no snapshot exists yet.
        var job = new FlushJob(_dir, _fs, cfd, mems, _snapshots.GetSequences(), NewPendingOutput, ReleasePendingOutput);
        return job.Run();
    }

    private void ReleasePendingOutput(ulong number)
    {
        lock (_mutex)
        {
            _pendingOutputs.Remove(number);
        }
    }

    /// <summary>
    /// Deletes tables, logs, MANIFESTs and temp files that nothing references. The pending outputs
    /// and the next file number are read before the live versions: an output leaves the pending
    /// set only after its version is installed, and a table numbered at or above the next file
    /// number is being written by a job that started after this look (RocksDB's
    /// min_pending_output rule), so no table in the making is deleted.
    /// </summary>
    /// <summary>A sweep from a finally block: an I/O error leaves the files for the next sweep.</summary>
    private void TryDeleteObsoleteFiles()
    {
        try
        {
            DeleteObsoleteFiles(atOpen: false);
        }
        catch (IOException)
        {
            // Retried at the next sweep (after the next flush or compaction, or at open).
        }
    }

    private void DeleteObsoleteFiles(bool atOpen)
    {
        lock (_sweepGate)
        {
            if (_deletionsDisabled > 0)
            {
                _deletionsDeferred = true; // EnableFileDeletions sweeps once the count is back at zero
                return;
            }
            DeleteObsoleteFilesCore(atOpen);
        }
    }

    private void DeleteObsoleteFilesCore(bool atOpen)
    {
        HashSet<ulong> live;
        List<ColumnFamilyData> families;
        ulong minLog;
        ulong firstUnallocated;
        lock (_mutex)
        {
            live = new HashSet<ulong>(_pendingOutputs);
            firstUnallocated = _versions.NextFileNumberPeek;
            minLog = Math.Min(_versions.MinLogNumberToKeep, _logNumber);
            _aliveLogs.RemoveAll(l => l.Number < minLog);
            families = AllFamilies();
        }
        live.UnionWith(_versions.LiveTableNumbers());
        ulong prevLog = _versions.PrevLogNumber;
        ulong manifest = _versions.ManifestFileNumber;
        foreach (string name in _fs.GetChildren(_dir))
        {
            if (!FileNames.TryParse(name, out DbFileType type, out ulong number))
            {
                continue;
            }
            bool keep = type switch
            {
                DbFileType.Log => number >= minLog || number == prevLog,
                DbFileType.Manifest => number >= manifest,
                DbFileType.Table => live.Contains(number) || number >= firstUnallocated,
                DbFileType.Temp => !atOpen,
                _ => true,
            };
            if (keep)
            {
                continue;
            }
            if (type == DbFileType.Table)
            {
                foreach (ColumnFamilyData cfd in families)
                {
                    cfd.Tables.Evict(number);
                }
            }
            try
            {
                _fs.DeleteFile(Path.Combine(_dir, name));
            }
            catch (IOException)
            {
                // Retried at the next sweep.
            }
        }
    }
}
