using System.Diagnostics;
using KvEngine.Compaction;
using KvEngine.Versions;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Db;

/// <summary>
/// Background jobs (flushes first, then compactions) for the <see cref="BackgroundScheduler"/>'s
/// threads, and manual compaction.
/// <para>
/// A job is picked under the mutex: a family's oldest immutable memtable if none of its flushes
/// runs (PickFlush), otherwise a compaction from the families' pickers, round robin, if fewer than
/// the compaction limit run (jobs minus a quarter reserved for flushes, at least one). Flushes of
/// one family run one at a time, oldest memtable first. The picker marks the files of running
/// compactions, so no file is in two compactions; a finished compaction's edit is logged, then a
/// new read state installed, then its files released, waiting writers woken and obsolete files
/// deleted.
/// </para>
/// </summary>
internal sealed partial class DbImpl
{
    private int _autoCompactionsRunning;
    private int _nextCompactionFamily; // round robin over families for the picker, under _mutex
    private int _manualCompactionsRunning;

    public EngineCounters Counters => _counters;

    /// <summary>The default family's compaction statistics.</summary>
    internal CompactionStatistics CompactionStats => _default.CompactionStats;

    /// <summary>Compactions that may run at once in the background (RocksDB's split of max_background_jobs).</summary>
    private int MaxAutoCompactions => _options.MaxBackgroundJobs >= 2
        ? _options.MaxBackgroundJobs - Math.Max(1, _options.MaxBackgroundJobs / 4)
        : 1;

    /// <summary>Stops background work: cancels running compactions, waits for manual ones, joins the threads.</summary>
    private void StopBackground()
    {
        _scheduler.Cancel();
        lock (_mutex)
        {
            _closing = true;
            Monitor.PulseAll(_mutex);
            while (_manualCompactionsRunning > 0)
            {
                Monitor.Wait(_mutex);
            }
        }
        _scheduler.Shutdown();
    }

    /// <summary>A scheduler thread: picks one job under the mutex and runs it (see <see cref="IBackgroundWorker"/>).</summary>
    public bool TryRunJob()
    {
        List<(ColumnFamilyData Family, ImmutableMemTable[] Jobs)>? flush = null;
        Compaction.Compaction? compaction = null;
        ColumnFamilyData? compactionFamily = null;
        ReadState? pinned = null;
        lock (_mutex)
        {
            if (_closing || _errors.Error != null)
            {
                return false;
            }
            flush = PickFlush();
            if (flush == null && _autoCompactionsRunning < MaxAutoCompactions)
            {
                compaction = PickCompaction(out compactionFamily, out pinned);
                if (compaction != null)
                {
                    _autoCompactionsRunning++;
                }
            }
        }
        if (flush != null)
        {
            RunFlush(flush);
            return true;
        }
        if (compaction == null)
        {
            return false;
        }
        try
        {
            RunCompaction(compactionFamily!, compaction, pinned!);
        }
        catch (Exception e) when (e is IOException or KvException or UnauthorizedAccessException or OperationCanceledException)
        {
            // Recorded as the background error by RunCompaction (or the database is closing).
        }
        finally
        {
            lock (_mutex)
            {
                _autoCompactionsRunning--;
            }
        }
        return true;
    }

    /// <summary>
    /// Holds _mutex. The next flush: a family's oldest memtable (with min_write_buffer_number_to_merge
    /// above 1, every waiting one, merged into one table as RocksDB does) when enough wait or a
    /// flush was asked for and none of the family runs; with atomic flush, every family's waiting
    /// memtables together. Marks the families as flushing. Null when there is none.
    /// </summary>
    private List<(ColumnFamilyData Family, ImmutableMemTable[] Jobs)>? PickFlush()
    {
        List<(ColumnFamilyData, ImmutableMemTable[])>? result = null;
        List<ColumnFamilyData> families = LiveFamilies();
        if (_options.AtomicFlush)
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
                    cfd.FlushRunning = true;
                    (result ??= new()).Add((cfd, cfd.Immutable.ToArray()));
                }
            }
            return result;
        }
        foreach (ColumnFamilyData cfd in families)
        {
            if (cfd.Immutable.Count > 0 && !cfd.FlushRunning &&
                (cfd.Immutable.Count >= cfd.MinImmutableToFlush || cfd.ForcedFlushes > 0))
            {
                cfd.FlushRunning = true;
                int count = cfd.Options.MinWriteBufferNumberToMerge > 1 ? cfd.Immutable.Count : 1;
                return [(cfd, cfd.Immutable.GetRange(0, count).ToArray())];
            }
        }
        return null;
    }

    /// <summary>
    /// Holds _mutex. The next automatic compaction of a live family whose auto compactions are on,
    /// looking at the families round robin; registered with the family's picker, with the read
    /// state it was picked from pinned. Null when no family needs one.
    /// </summary>
    private Compaction.Compaction? PickCompaction(out ColumnFamilyData? family, out ReadState? pinned)
    {
        List<ColumnFamilyData> live = LiveFamilies();
        for (int i = 0; i < live.Count; i++)
        {
            ColumnFamilyData cfd = live[(_nextCompactionFamily + i) % live.Count];
            if (cfd.CompactionOptions.DisableAutoCompactions)
            {
                continue;
            }
            ReadState state = cfd.AcquireReadState();
            Compaction.Compaction? c = cfd.Picker.Pick(state.Version);
            if (c != null)
            {
                _nextCompactionFamily = (_nextCompactionFamily + i + 1) % live.Count;
                family = cfd;
                pinned = state;
                return c;
            }
            state.Unref();
        }
        family = null;
        pinned = null;
        return null;
    }

    private void RunFlush(List<(ColumnFamilyData Family, ImmutableMemTable[] Jobs)> jobs)
    {
        try
        {
            FlushImmutable(jobs);
        }
        catch (Exception e) when (e is IOException or KvException or UnauthorizedAccessException)
        {
            lock (_mutex)
            {
                SetBackgroundError(e, Diagnostics.BackgroundJobKind.Flush);
            }
        }
        finally
        {
            bool released = false;
            lock (_mutex)
            {
                foreach ((ColumnFamilyData cfd, ImmutableMemTable[] _) in jobs)
                {
                    released |= EndFlush(cfd);
                }
                Monitor.PulseAll(_mutex); // a resume waits for a failed flush to finish
            }
            if (released)
            {
                TryDeleteObsoleteFiles(); // the dropped family's files were pinned until now
            }
        }
    }

    /// <summary>
    /// Holds _mutex. A flush of <paramref name="cfd"/> ended (done or failed). A family dropped
    /// meanwhile left its memory to this flush (DropColumnFamily): released here; true then, and
    /// the caller sweeps its files once out of the lock.
    /// </summary>
    private static bool EndFlush(ColumnFamilyData cfd)
    {
        cfd.FlushRunning = false;
        if (!cfd.IsDropped)
        {
            return false;
        }
        cfd.ReleaseMemory();
        return true;
    }

    /// <summary>
    /// Runs a registered compaction on this thread, logs its edit, installs the new read state and
    /// releases its files. A failure (other than closing) becomes the background error; either way
    /// the exception propagates. Releases <paramref name="pinned"/> (the read state whose version
    /// the compaction was picked from) before deleting the inputs that became obsolete.
    /// </summary>
    private void RunCompaction(ColumnFamilyData cfd, Compaction.Compaction c, ReadState pinned)
    {
        var sw = Stopwatch.StartNew();
        var outputs = new List<ulong>();
        var stats = new LevelCompactionStats { Count = 1 };
        bool droppedMeanwhile = false;
        long jobId = _telemetry.NextJobId();
        _telemetry.CompactionStarted(jobId, c);
        try
        {
            if (c.IsDeletion)
            {
                _versions.LogAndApply(ForFamily(cfd, CompactionJob.DeletionEdit(c)));
            }
            else if (c.IsTrivialMove)
            {
                _versions.LogAndApply(ForFamily(cfd, CompactionJob.TrivialMoveEdit(c)));
                stats.BytesMoved = (long)c.StartInputs[0].FileSize;
            }
            else
            {
                // RocksDB's GetCompressionType: an output no deeper level has data below is bottommost.
                Table.TableOptions outputOptions = c.OutputLevel >= pinned.Version.NumNonEmptyLevels - 1 ? cfd.BottommostTableOptions : cfd.TableOptions;
                var env = new CompactionEnvironment(_dir, _fs, cfd.Tables, outputOptions, () =>
                {
                    ulong n = NewPendingOutput();
                    outputs.Add(n);
                    return n;
                }, cfd.BuildContext);
                var job = new CompactionJob(c, pinned.Version, env, _snapshots.GetSequences(), _scheduler.Cancellation,
                    cfd.Options.CompactionFilter, cfd.Options.MergeOperator);
                CompactionJobResult r = job.Run();
                _versions.LogAndApply(ForFamily(cfd, r.Edit));
                stats.BytesReadNonOutput = r.BytesReadStartLevel;
                stats.BytesReadOutput = r.BytesReadOutputLevel;
                stats.BytesWritten = r.BytesWritten;
                stats.KeysIn = r.KeysIn;
                stats.KeysDropped = r.KeysDropped;
                stats.AddCuts(r.OutputCuts);
                _counters.AddKeysDroppedByFilter(r.KeysDroppedByFilter);
            }
        }
        catch (ColumnFamilyDroppedException)
        {
            // Dropped meanwhile: nothing to record; the outputs are swept as obsolete files.
            lock (_mutex)
            {
                cfd.Picker.Release(c);
                foreach (ulong n in outputs)
                {
                    _pendingOutputs.Remove(n);
                }
                Monitor.PulseAll(_mutex);
            }
            droppedMeanwhile = true;
        }
        catch (Exception e)
        {
            lock (_mutex)
            {
                cfd.Picker.Release(c);
                foreach (ulong n in outputs)
                {
                    _pendingOutputs.Remove(n);
                }
                if (e is not OperationCanceledException && !_closing)
                {
                    SetBackgroundError(e, Diagnostics.BackgroundJobKind.Compaction);
                }
                Monitor.PulseAll(_mutex);
            }
            throw;
        }
        finally
        {
            pinned.Unref();
        }
        if (droppedMeanwhile)
        {
            DeleteObsoleteFiles(atOpen: false);
            return;
        }
        lock (_mutex)
        {
            cfd.InstallReadState();
            cfd.Picker.Release(c);
            foreach (ulong n in outputs)
            {
                _pendingOutputs.Remove(n);
            }
            Monitor.PulseAll(_mutex);
        }
        stats.Micros = sw.Elapsed.Ticks / (TimeSpan.TicksPerMillisecond / 1000);
        cfd.CompactionStats.AddCompaction(c.OutputLevel, stats);
        _counters.AddCompaction(stats.BytesReadNonOutput + stats.BytesReadOutput, stats.BytesWritten, c.IsTrivialMove);
        _telemetry.CompactionFinished(jobId, c, stats, outputs.Count, sw.Elapsed);
        DeleteObsoleteFiles(atOpen: false);
    }

    private static VersionEdit ForFamily(ColumnFamilyData cfd, VersionEdit edit)
    {
        edit.ColumnFamily = cfd.Id;
        return edit;
    }

    /// <summary>A new file number, registered as a pending output until its owner removes it.</summary>
    private ulong NewPendingOutput()
    {
        lock (_mutex)
        {
            ulong n = _versions.NewFileNumber();
            _pendingOutputs.Add(n);
            return n;
        }
    }

    /// <summary>
    /// Flushes the memtable, then compacts every level holding keys in [begin, end] (user keys,
    /// null = unbounded) into the next one, down to the deepest such level, which is rewritten in
    /// place only when a compaction filter is set (RocksDB's CompactRange with its default
    /// bottommost_level_compaction, kIfHaveCompactionFilter). Runs on the calling thread; waits for background
    /// compactions of the same files. Under FIFO compaction it flushes and runs what the FIFO
    /// picker asks for (RocksDB's FIFOCompactionPicker::CompactRange).
    /// </summary>
    public void CompactRange(ColumnFamilyData cfd, byte[]? begin, byte[]? end)
    {
        ThrowIfDisposed();
        ThrowIfReadOnly("CompactRange");
        if (begin != null && end != null && begin.AsSpan().SequenceCompareTo(end) > 0)
        {
            throw new ArgumentException("The range's begin key is after its end key.", nameof(begin));
        }
        FlushCore([cfd], wait: true);
        if (cfd.CompactionOptions.Style == CompactionStyle.Fifo)
        {
            RunCompactionsInline(cfd); // FIFO keeps every file in level 0: run what the FIFO picker asks
            return;
        }
        lock (_mutex)
        {
            ThrowIfDisposed();
            _manualCompactionsRunning++;
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
            lock (_mutex)
            {
                _manualCompactionsRunning--;
                Monitor.PulseAll(_mutex);
            }
        }
    }

    /// <summary>
    /// Compacts the files of <paramref name="level"/> overlapping [begin, end] into
    /// <paramref name="outputLevel"/> and nothing else (RocksDB's TEST_CompactRange), on this thread,
    /// in <paramref name="cfd"/> (the default family when null).
    /// </summary>
    internal void CompactLevel(int level, int outputLevel, byte[]? begin, byte[]? end, ColumnFamilyData? cfd = null)
    {
        ThrowIfDisposed();
        if (level < 0 || outputLevel <= level || outputLevel >= Version.NumLevels || (level > 0 && outputLevel != level + 1))
        {
            throw new ArgumentOutOfRangeException(nameof(outputLevel), $"Cannot compact level {level} into level {outputLevel}.");
        }
        lock (_mutex)
        {
            _manualCompactionsRunning++;
        }
        try
        {
            CompactLevelRange(cfd ?? _default, level, outputLevel, begin, end);
        }
        finally
        {
            lock (_mutex)
            {
                _manualCompactionsRunning--;
                Monitor.PulseAll(_mutex);
            }
        }
    }

    /// <summary>
    /// Runs the compactions the picker chooses, one after another on this thread, until no level
    /// needs one; returns how many ran. Deterministic for a given tree (with auto compactions off,
    /// nothing else compacts), for tests and benchmarks that compare compaction behaviours. In
    /// <paramref name="cfd"/>, the default family when null.
    /// </summary>
    internal int RunCompactionsInline(ColumnFamilyData? cfd = null)
    {
        cfd ??= _default;
        ThrowIfDisposed();
        int count = 0;
        while (true)
        {
            Compaction.Compaction? c;
            ReadState pinned;
            lock (_mutex)
            {
                if (_errors.Error != null)
                {
                    throw new KvException("Compaction stopped after a background error: " + _errors.Error.Message, _errors.Error);
                }
                pinned = cfd.AcquireReadState();
                c = cfd.Picker.Pick(pinned.Version);
                if (c == null)
                {
                    pinned.Unref();
                    return count;
                }
                _manualCompactionsRunning++;
            }
            try
            {
                RunCompaction(cfd, c, pinned);
            }
            finally
            {
                lock (_mutex)
                {
                    _manualCompactionsRunning--;
                    Monitor.PulseAll(_mutex);
                }
            }
            count++;
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

    public ValueTask CompactRangeAsync(ColumnFamilyData cfd, byte[]? begin, byte[]? end, CancellationToken cancellationToken)
    {
        ThrowIfReadOnly("CompactRange");
        return new(Task.Run(() => CompactRange(cfd, begin, end), cancellationToken));
    }

    private void CompactLevelRange(ColumnFamilyData cfd, int level, int output, byte[]? begin, byte[]? end)
    {
        byte[]? after = null;
        while (true)
        {
            Compaction.Compaction? c;
            ReadState pinned;
            lock (_mutex)
            {
                while (true)
                {
                    if (_errors.Error != null)
                    {
                        throw new KvException("Compaction stopped after a background error: " + _errors.Error.Message, _errors.Error);
                    }
                    if (_closing)
                    {
                        throw new ObjectDisposedException(nameof(KvDb));
                    }
                    if (cfd.IsDropped)
                    {
                        throw new ArgumentException($"Column family '{cfd.Name}' was dropped.", nameof(cfd));
                    }
                    pinned = cfd.AcquireReadState();
                    ManualPickResult r = cfd.Picker.PickManual(pinned.Version, level, output, begin, end, after, out c);
                    if (r == ManualPickResult.Picked)
                    {
                        break;
                    }
                    pinned.Unref();
                    if (r == ManualPickResult.NothingToDo)
                    {
                        return;
                    }
                    Monitor.Wait(_mutex);
                }
            }
            try
            {
                RunCompaction(cfd, c!, pinned);
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
