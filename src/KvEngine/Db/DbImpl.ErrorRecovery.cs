using KvEngine.Storage;

namespace KvEngine.Db;

/// <summary>
/// Leaving the background-error state without reopening (RocksDB's ErrorHandler and
/// DB::Resume): after a failed WAL write, flush or compaction the database refuses writes; a
/// resume switches to a fresh WAL (the old one may end in a torn record), flushes every memtable
/// so nothing depends on the abandoned logs, and only then clears the error. A retryable error
/// (no space on the device: <see cref="StorageErrors.IsNoSpace"/>) is resumed automatically every
/// <see cref="KvOptions.BackgroundErrorResumeRetryInterval"/>, up to
/// <see cref="KvOptions.MaxBackgroundErrorResumeCount"/> attempts; any other error except
/// corruption waits for <see cref="Resume"/>.
/// <para>
/// Concurrency: one resume runs at a time (<see cref="_resumeGate"/>). While it runs the error
/// stays set, so writers keep failing and background threads pick no job; <see cref="_resuming"/>
/// (guarded by _mutex) lets only the forced memtable switch through the write queue, which
/// serializes it with any write still in flight. Memtables are flushed in order on the resuming
/// thread; the error is cleared under _mutex only after the last one is in a table.
/// </para>
/// </summary>
internal sealed partial class DbImpl
{
    private readonly object _resumeGate = new();
    private bool _resuming;

    /// <summary>An automatic resume loop is running (for tests).</summary>
    internal bool AutomaticResumeRunning
    {
        get
        {
            lock (_mutex)
            {
                return _errors.AutoResumeScheduled;
            }
        }
    }

    /// <summary>
    /// Clears a background error (RocksDB's DB::Resume). Does nothing when there is none.
    /// </summary>
    /// <exception cref="KvException">The database could not recover (the new error is inside), or the error is corruption.</exception>
    public void Resume()
    {
        ThrowIfDisposed();
        ThrowIfReadOnly("Resume");
        Exception? error;
        lock (_mutex)
        {
            error = _errors.Error;
        }
        if (error is KvCorruptionException)
        {
            throw new KvException("The database stopped on corruption, which Resume cannot repair: " + error.Message, error);
        }
        if (error != null && !TryResume(out Exception? failure))
        {
            throw Wrap(failure!);
        }
    }

    /// <summary>Holds _mutex. A flush of some family runs.</summary>
    private bool AnyFlushRunning()
    {
        foreach (ColumnFamilyData cfd in AllFamilies())
        {
            if (cfd.FlushRunning)
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>One resume attempt; false with the error that stopped it.</summary>
    private bool TryResume(out Exception? failure)
    {
        failure = null;
        lock (_resumeGate)
        {
            lock (_mutex)
            {
                if (_errors.Error == null)
                {
                    return true;
                }
                if (_closing || _errors.Error is KvCorruptionException)
                {
                    failure = _errors.Error;
                    return false;
                }
                // A flush that failed is still finishing on its background thread.
                while (AnyFlushRunning())
                {
                    Monitor.Wait(_mutex);
                }
                _resuming = true;
            }
            try
            {
                // Through the write queue, so no group is writing the WAL or inserting meanwhile.
                WriteSync(batch: null, sync: false, disableWal: false, force: true);
                int flushed = 0;
                while (true)
                {
                    ImmutableMemTable next;
                    ColumnFamilyData? family = null;
                    lock (_mutex)
                    {
                        foreach (ColumnFamilyData cfd in AllFamilies())
                        {
                            if (cfd.Immutable.Count > 0)
                            {
                                family = cfd;
                                break;
                            }
                        }
                        if (family == null)
                        {
                            _errors.Clear();
                            _resuming = false;
                            Monitor.PulseAll(_mutex);
                            _telemetry.Resumed(flushed);
                            break;
                        }
                        next = family.Immutable[0];
                        next.RenewFlushedIfFailed();
                        family.FlushRunning = true;
                    }
                    try
                    {
                        FlushImmutable([(family, [next])]);
                        flushed++;
                    }
                    finally
                    {
                        bool released = false;
                        lock (_mutex)
                        {
                            released = EndFlush(family);
                            Monitor.PulseAll(_mutex);
                        }
                        if (released)
                        {
                            TryDeleteObsoleteFiles();
                        }
                    }
                }
            }
            catch (Exception e) when (e is IOException or KvException or UnauthorizedAccessException)
            {
                lock (_mutex)
                {
                    _resuming = false;
                    _errors.Replace(e); // the error that now stops the database (IsNoSpace looks inside)
                    foreach (ColumnFamilyData cfd in AllFamilies())
                    {
                        foreach (ImmutableMemTable imm in cfd.Immutable)
                        {
                            imm.Flushed.TrySetException(Wrap(e));
                        }
                    }
                    Monitor.PulseAll(_mutex);
                }
                _telemetry.ResumeFailed(e);
                failure = e;
                return false;
            }
        }
        _scheduler.Wake(); // flushes and compactions that waited on the error may run now
        return true;
    }
}
