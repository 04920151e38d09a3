using System.Diagnostics;
using KvEngine.Compaction;
using KvEngine.Db.State;
using KvEngine.Diagnostics;
using KvEngine.Storage;
using KvEngine.Versions;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Db.Background;

/// <summary>
/// Picks, runs and installs compactions (RocksDB's DBImpl::BackgroundCompaction and
/// RunManualCompaction with CompactionJob::Install): automatic ones for the
/// <see cref="BackgroundScheduler"/>'s threads, and manual ones (CompactRange, a level, or every
/// compaction the picker asks for) on the calling thread.
/// <para>
/// Invariants: the families' pickers mark the files of running compactions, so no file is in two
/// compactions; at most <see cref="MaxAutomatic"/> automatic compactions run (the background jobs
/// minus a quarter reserved for flushes, at least one), picked from the families round robin; a
/// finished compaction's edit is logged, then a new read state installed, then its files released
/// in the picker, its outputs released from the pending outputs, waiting writers woken and
/// obsolete files deleted; the version it was picked from stays pinned until then (the version
/// alone, not the read state: memtables flushed meanwhile are freed at once). A failure
/// other than closing becomes the background error; a family dropped meanwhile records nothing.
/// Closing waits (<see cref="WaitForManualCompactions"/>) until no manual compaction runs.
/// </para>
/// <para>
/// Thread-safety: the running counts and the round-robin cursor are guarded by the database
/// mutex; <see cref="TryPickAutomatic"/> and <see cref="WaitForManualCompactions"/> run with it
/// held, everything else takes it for short steps and runs compactions outside it.
/// </para>
/// </summary>
internal sealed class CompactionRunner
{
    private readonly DbMutex _mutex;
    private readonly int _maxBackgroundJobs;
    private readonly JobContext _db;
    private readonly CancellationToken _shutdown;
    private readonly Func<bool> _closing;
    private readonly Action _throwIfDisposed;
    private readonly Action _wakeBackground;
    private int _automaticRunning;
    private int _nextFamily; // round robin over families for the picker
    private int _manualRunning;

    /// <param name="db">The database's collaborators.</param>
    /// <param name="maxBackgroundJobs">The background job count (<see cref="KvOptions.MaxBackgroundJobs"/>).</param>
    /// <param name="shutdown">Cancelled when the database closes: running compactions stop.</param>
    /// <param name="closing">True once background work stops (read with the mutex held).</param>
    /// <param name="throwIfDisposed">Throws <see cref="ObjectDisposedException"/> once the database is closed.</param>
    /// <param name="wakeBackground">Wakes a background thread (after a manual compaction: what it held may now be picked).</param>
    public CompactionRunner(JobContext db, int maxBackgroundJobs, CancellationToken shutdown, Func<bool> closing, Action throwIfDisposed,
        Action wakeBackground)
    {
        _wakeBackground = wakeBackground;
        _db = db;
        _mutex = db.Mutex;
        _maxBackgroundJobs = maxBackgroundJobs;
        _shutdown = shutdown;
        _closing = closing;
        _throwIfDisposed = throwIfDisposed;
    }

    /// <summary>Compactions that may run at once in the background (RocksDB's split of max_background_jobs).</summary>
    private int MaxAutomatic => _maxBackgroundJobs >= 2
        ? _maxBackgroundJobs - Math.Max(1, _maxBackgroundJobs / 4)
        : 1;

    /// <summary>Holds the mutex. Waits until no manual compaction runs (closing: the scheduler was cancelled first).</summary>
    public void WaitForManualCompactions()
    {
        _mutex.AssertHeld();
        while (_manualRunning > 0)
        {
            _mutex.Wait();
        }
    }

    /// <summary>
    /// Holds the mutex. The next automatic compaction of a live family whose auto compactions are
    /// on, looking at the families round robin, when fewer than the limit run; registered with the
    /// family's picker, with the read state it was picked from pinned. False when none is due.
    /// </summary>
    public bool TryPickAutomatic(out PickedCompaction picked)
    {
        _mutex.AssertHeld();
        picked = default;
        if (_automaticRunning >= MaxAutomatic)
        {
            return false;
        }
        List<ColumnFamilyData> live = _db.Families.Live();
        for (int i = 0; i < live.Count; i++)
        {
            ColumnFamilyData cfd = live[(_nextFamily + i) % live.Count];
            if (cfd.CompactionOptions.DisableAutoCompactions)
            {
                continue;
            }
            Version version = cfd.AcquireVersion();
            Compaction.Compaction? c = cfd.Picker.Pick(version);
            if (c == null && cfd.Level0Reads.Requested)
            {
                c = cfd.Picker.PickLevel0ForReads(version); // nothing is due by size: reads asked for level 0
            }
            if (c != null)
            {
                _nextFamily = (_nextFamily + i + 1) % live.Count;
                picked = new PickedCompaction(cfd, c, version);
                _automaticRunning++;
                return true;
            }
            version.Unref();
        }
        return false;
    }

    /// <summary>Runs an automatic compaction <see cref="TryPickAutomatic"/> chose, on this thread; a failure is the background error.</summary>
    public void RunAutomatic(PickedCompaction picked)
    {
        _mutex.AssertNotHeld();
        try
        {
            Run(picked.Family, picked.Compaction, picked.Pinned);
        }
        catch (Exception e) when (e is IOException or KvException or UnauthorizedAccessException or OperationCanceledException)
        {
            // Recorded as the background error by Run (or the database is closing).
        }
        finally
        {
            using (_mutex.Lock())
            {
                _automaticRunning--;
            }
        }
    }

    /// <summary>
    /// Runs a registered compaction on this thread, logs its edit, installs the new read state and
    /// releases its files. A failure (other than closing) becomes the background error; either way
    /// the exception propagates. Releases <paramref name="pinned"/> (the version the compaction was
    /// picked from) before deleting the inputs that became obsolete.
    /// </summary>
    private void Run(ColumnFamilyData cfd, Compaction.Compaction c, Version pinned)
    {
        // Reads stop charging level 0 while its files are being compacted (Level0ReadCharges).
        bool level0 = c.StartLevel == 0;
        if (level0)
        {
            cfd.Level0Reads.BeginLevel0Compaction();
        }
        try
        {
            RunCompaction(cfd, c, pinned);
        }
        finally
        {
            if (level0)
            {
                cfd.Level0Reads.EndLevel0Compaction();
            }
        }
    }

    private void RunCompaction(ColumnFamilyData cfd, Compaction.Compaction c, Version pinned)
    {
        var sw = Stopwatch.StartNew();
        var outputs = new List<ulong>();
        var stats = new LevelCompactionStats { Count = 1 };
        bool droppedMeanwhile = false;
        long jobId = _db.Telemetry.NextJobId();
        _db.Telemetry.CompactionStarted(jobId, c);
        try
        {
            if (c.IsDeletion)
            {
                _db.Versions.LogAndApply(ForFamily(cfd, CompactionJob.DeletionEdit(c)));
            }
            else if (c.IsTrivialMove)
            {
                _db.Versions.LogAndApply(ForFamily(cfd, CompactionJob.TrivialMoveEdit(c)));
                stats.BytesMoved = (long)c.StartInputs[0].FileSize;
            }
            else
            {
                // RocksDB's GetCompressionType: an output no deeper level has data below is bottommost.
                Table.TableOptions outputOptions = c.OutputLevel >= pinned.NumNonEmptyLevels - 1 ? cfd.BottommostTableOptions : cfd.TableOptions;
                var env = new CompactionEnvironment(_db.Dir, _db.Fs, cfd.Tables, outputOptions, () =>
                {
                    ulong n = _db.PendingOutputs.NewFileNumber();
                    outputs.Add(n);
                    return n;
                }, cfd.BuildContext, _db.WriteLimit);
                var job = new CompactionJob(c, pinned, env, _db.Snapshots.GetSequences(), _shutdown,
                    cfd.Options.CompactionFilter, cfd.Options.MergeOperator);
                CompactionJobResult r = job.Run();
                _db.Versions.LogAndApply(ForFamily(cfd, r.Edit));
                stats.BytesReadNonOutput = r.BytesReadStartLevel;
                stats.BytesReadOutput = r.BytesReadOutputLevel;
                stats.BytesWritten = r.BytesWritten;
                stats.KeysIn = r.KeysIn;
                stats.KeysDropped = r.KeysDropped;
                stats.AddCuts(r.OutputCuts);
                _db.Counters.AddKeysDroppedByFilter(r.KeysDroppedByFilter);
            }
        }
        catch (ColumnFamilyDroppedException)
        {
            // Dropped meanwhile: nothing to record; the outputs are swept as obsolete files.
            using (_mutex.Lock())
            {
                cfd.Picker.Release(c);
                _db.PendingOutputs.RemoveAll(outputs);
                _mutex.PulseAll();
            }
            droppedMeanwhile = true;
        }
        catch (Exception e)
        {
            using (_mutex.Lock())
            {
                cfd.Picker.Release(c);
                _db.PendingOutputs.RemoveAll(outputs);
                if (e is not OperationCanceledException && !_closing())
                {
                    _db.Errors.SetBackgroundError(e, BackgroundJobKind.Compaction);
                }
                _mutex.PulseAll();
            }
            throw;
        }
        finally
        {
            pinned.Unref();
        }
        if (droppedMeanwhile)
        {
            _db.Sweeper.Sweep(atOpen: false);
            return;
        }
        using (_mutex.Lock())
        {
            cfd.InstallReadState();
            cfd.Picker.Release(c);
            _db.PendingOutputs.RemoveAll(outputs);
            _mutex.PulseAll();
        }
        stats.Micros = sw.Elapsed.Ticks / (TimeSpan.TicksPerMillisecond / 1000);
        bool readTriggered = c.Reason == Compaction.CompactionReason.ReadTriggered;
        cfd.CompactionStats.AddCompaction(c.OutputLevel, stats, readTriggered);
        _db.Counters.AddCompaction(stats.BytesReadNonOutput + stats.BytesReadOutput, stats.BytesWritten, c.IsTrivialMove);
        if (readTriggered)
        {
            _db.Counters.AddReadTriggeredCompaction(); // after AddCompaction: never above Compactions
        }
        _db.Telemetry.CompactionFinished(jobId, c, stats, outputs.Count, sw.Elapsed);
        _db.Sweeper.Sweep(atOpen: false);
    }

    private static VersionEdit ForFamily(ColumnFamilyData cfd, VersionEdit edit)
    {
        edit.ColumnFamily = cfd.Id;
        return edit;
    }

    /// <summary>
    /// The compaction half of CompactRange (the caller flushed the family first): compacts every
    /// level holding keys in [begin, end] (user keys, null = unbounded) into the next one, down to
    /// the deepest such level, which is rewritten in place only when a compaction filter is set
    /// (RocksDB's default bottommost_level_compaction, kIfHaveCompactionFilter). Runs on the calling
    /// thread; waits for background compactions of the same files. Under FIFO compaction it runs
    /// what the FIFO picker asks for (RocksDB's FIFOCompactionPicker::CompactRange).
    /// </summary>
    public void CompactRange(ColumnFamilyData cfd, byte[]? begin, byte[]? end)
    {
        _mutex.AssertNotHeld();
        if (cfd.CompactionOptions.Style == CompactionStyle.Fifo)
        {
            RunInline(cfd); // FIFO keeps every file in level 0: run what the FIFO picker asks
            return;
        }
        using (_mutex.Lock())
        {
            _throwIfDisposed();
            _manualRunning++;
        }
        try
        {
            Version v = cfd.Versions.Current;
            int maxLevel = -1;
            var scratch = new List<FileMetaData>();
            for (int level = 0; level < Version.NumLevels; level++)
            {
                scratch.Clear();
                v.GetOverlappingFiles(level, begin, end, scratch);
                if (scratch.Count > 0)
                {
                    maxLevel = level;
                }
            }
            int current = 0;
            while (maxLevel >= 0 && (current == 0 || current < maxLevel))
            {
                int output = current == 0 ? BaseLevel(cfd) : current + 1;
                CompactLevelRange(cfd, current, output, begin, end);
                current = output;
            }
            if (cfd.Options.CompactionFilter != null && maxLevel > 0 && current == maxLevel)
            {
                // RocksDB's default bottommost_level_compaction, kIfHaveCompactionFilter: the
                // deepest level is rewritten in place, so the filter sees the values already there.
                CompactLevelRange(cfd, maxLevel, maxLevel, begin, end);
            }
        }
        finally
        {
            EndManual();
        }
    }

    /// <summary>
    /// Compacts the files of <paramref name="level"/> overlapping [begin, end] into
    /// <paramref name="outputLevel"/> and nothing else (RocksDB's TEST_CompactRange), on this thread.
    /// </summary>
    public void CompactLevel(ColumnFamilyData cfd, int level, int outputLevel, byte[]? begin, byte[]? end)
    {
        _mutex.AssertNotHeld();
        if (level < 0 || outputLevel <= level || outputLevel >= Version.NumLevels || (level > 0 && outputLevel != level + 1))
        {
            throw new ArgumentOutOfRangeException(nameof(outputLevel), $"Cannot compact level {level} into level {outputLevel}.");
        }
        using (_mutex.Lock())
        {
            _manualRunning++;
        }
        try
        {
            CompactLevelRange(cfd, level, outputLevel, begin, end);
        }
        finally
        {
            EndManual();
        }
    }

    /// <summary>
    /// Runs the compactions the picker chooses, one after another on this thread, until no level
    /// needs one; returns how many ran. Deterministic for a given tree (with auto compactions off,
    /// nothing else compacts), for tests and benchmarks that compare compaction behaviours.
    /// </summary>
    public int RunInline(ColumnFamilyData cfd)
    {
        int count = 0;
        while (true)
        {
            Compaction.Compaction? c;
            Version pinned;
            using (_mutex.Lock())
            {
                ThrowIfStopped();
                pinned = cfd.AcquireVersion();
                c = cfd.Picker.Pick(pinned);
                if (c == null)
                {
                    pinned.Unref();
                    return count;
                }
                _manualRunning++;
            }
            try
            {
                Run(cfd, c, pinned);
            }
            finally
            {
                EndManual();
            }
            count++;
        }
    }

    private void EndManual()
    {
        using (_mutex.Lock())
        {
            _manualRunning--;
            _mutex.PulseAll();
        }
        _wakeBackground(); // a compaction it kept from being picked (by size or by reads) may run now
    }

    /// <summary>Holds the mutex. A background error stops manual compaction.</summary>
    private void ThrowIfStopped()
    {
        _mutex.AssertHeld();
        if (_db.Errors.Error is { } error)
        {
            throw new KvWriteStoppedException("Compaction stopped after a background error: " + error.Message, error);
        }
    }

    private static int BaseLevel(ColumnFamilyData cfd)
    {
        ReadState s = cfd.AcquireReadState();
        try
        {
            return LevelTargets.Compute(s.Version, cfd.CompactionOptions).BaseLevel;
        }
        finally
        {
            s.Unref();
        }
    }

    private void CompactLevelRange(ColumnFamilyData cfd, int level, int output, byte[]? begin, byte[]? end)
    {
        byte[]? after = null;
        while (true)
        {
            Compaction.Compaction? c;
            Version pinned;
            using (_mutex.Lock())
            {
                while (true)
                {
                    ThrowIfStopped();
                    if (_closing())
                    {
                        throw new ObjectDisposedException(nameof(KvDb));
                    }
                    if (cfd.IsDropped)
                    {
                        throw new ArgumentException($"Column family '{cfd.Name}' was dropped.", nameof(cfd));
                    }
                    pinned = cfd.AcquireVersion();
                    ManualPickResult r = cfd.Picker.PickManual(pinned, level, output, begin, end, after, out c);
                    if (r == ManualPickResult.Picked)
                    {
                        break;
                    }
                    pinned.Unref();
                    if (r == ManualPickResult.NothingToDo)
                    {
                        return;
                    }
                    _mutex.Wait();
                }
            }
            try
            {
                Run(cfd, c!, pinned);
            }
            catch (OperationCanceledException e)
            {
                throw new ObjectDisposedException("The database was closed during a manual compaction.", e);
            }
            if (level == 0)
            {
                return; // level 0 compacts every overlapping file at once
            }
            after = Format.InternalKeys.UserKey(c!.StartInputs[^1].Largest).ToArray();
        }
    }
}
