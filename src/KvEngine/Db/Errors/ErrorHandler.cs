using KvEngine.Db.State;
using KvEngine.Diagnostics;
using KvEngine.Storage;

namespace KvEngine.Db.Errors;

/// <summary>
/// The background-error state and leaving it without reopening (RocksDB's ErrorHandler and
/// DB::Resume). The first error of a WAL write, memtable insert or switch, flush or compaction
/// stops writes (<see cref="Error"/>) until a resume clears it; reads go on. Recording it fails
/// every pending flush (background threads pick no job while an error is set, so a Flush() waiting
/// on one would otherwise wait forever) and wakes every waiter. A resume switches to a fresh WAL
/// (the old one may end in a torn record), flushes every memtable so nothing depends on the
/// abandoned logs, and only then clears the error. A retryable error (no space on the device:
/// <see cref="StorageErrors.IsNoSpace"/>) is resumed automatically every
/// <see cref="KvOptions.BackgroundErrorResumeRetryInterval"/>, up to
/// <see cref="KvOptions.MaxBackgroundErrorResumeCount"/> attempts; any other error except
/// corruption waits for an explicit resume; corruption is never resumed.
/// <para>
/// Invariants: the resume sequence itself is <see cref="ErrorRecovery"/>'s (one attempt at a time;
/// the error stays set while it runs, and <see cref="Resuming"/> lets only its forced memtable
/// switch through the write queue); this type holds the state it changes. At most one automatic
/// loop runs (<see cref="AutoResumeScheduled"/>); each of its steps is one attempt.
/// </para>
/// <para>
/// Thread-safety: <see cref="Error"/>, <see cref="ErrorCount"/>, <see cref="Resuming"/>,
/// <see cref="AutoResumeScheduled"/>, <see cref="Record"/>, <see cref="SetBackgroundError"/>,
/// <see cref="BeginResume"/> and <see cref="EndResume"/> are guarded by the database mutex
/// (callers hold it); the automatic loop takes it itself.
/// </para>
/// </summary>
internal sealed class ErrorHandler
{
    private readonly DbMutex _mutex;
    private readonly KvOptions _options;
    private readonly ColumnFamilySet _families;
    private readonly DbTelemetry _telemetry;
    private readonly Func<bool> _closing;
    private readonly Func<WaitHandle> _shutdown;
    private readonly ResumeAttempt _automaticResume;

    /// <param name="mutex">The database mutex.</param>
    /// <param name="options">Retry count and interval.</param>
    /// <param name="families">Whose pending flushes an error fails.</param>
    /// <param name="telemetry">Logs errors and resumes.</param>
    /// <param name="closing">True once the database is closing (no loop starts then, no resume runs).</param>
    /// <param name="shutdown">Signalled when the database closes (the loop's wait ends).</param>
    /// <param name="automaticResume">One resume attempt of the database (the loop's step).</param>
    public ErrorHandler(DbMutex mutex, KvOptions options, ColumnFamilySet families, DbTelemetry telemetry,
        Func<bool> closing, Func<WaitHandle> shutdown, ResumeAttempt automaticResume)
    {
        _mutex = mutex;
        _options = options;
        _families = families;
        _telemetry = telemetry;
        _closing = closing;
        _shutdown = shutdown;
        _automaticResume = automaticResume;
    }

    /// <summary>The error that stops writes; null when there is none.</summary>
    public Exception? Error { get; private set; }

    /// <summary>Background errors recorded since open (rocksdb.background-errors).</summary>
    public long ErrorCount { get; private set; }

    /// <summary>An automatic resume loop is running.</summary>
    public bool AutoResumeScheduled { get; private set; }

    /// <summary>A resume runs: only its forced memtable switch passes the write queue.</summary>
    public bool Resuming { get; private set; }

    /// <summary>The exception a caller sees for <paramref name="e"/>: a <see cref="KvException"/> (or <see cref="ObjectDisposedException"/>) as it is, anything else wrapped.</summary>
    public static Exception Wrap(Exception e) =>
        e is KvException or ObjectDisposedException ? e : new KvException("Write failed: " + e.Message, e);

    /// <summary>Records <paramref name="e"/> when no error is set (true then), and starts the automatic resume for a retryable one.</summary>
    public bool Record(Exception e)
    {
        _mutex.AssertHeld();
        if (Error != null)
        {
            return false;
        }
        Error = e;
        ErrorCount++;
        ScheduleAutomaticResume();
        return true;
    }

    /// <summary>
    /// Holds the mutex. Records the first background error (the database then refuses writes, as
    /// RocksDB does), fails every flush still pending and wakes every waiter so stalled writers see
    /// it. <paramref name="operation"/> is what failed (logged).
    /// </summary>
    public void SetBackgroundError(Exception e, BackgroundJobKind operation)
    {
        _mutex.AssertHeld();
        if (Record(e))
        {
            _telemetry.BackgroundError(e, operation, AutoResumeScheduled);
        }
        FailPendingFlushes(Error ?? e);
        _mutex.PulseAll();
    }

    /// <summary>Holds the mutex. Fails the flush of every memtable waiting for one.</summary>
    private void FailPendingFlushes(Exception e)
    {
        _mutex.AssertHeld();
        foreach (ColumnFamilyData cfd in _families.All())
        {
            foreach (ImmutableMemTable imm in cfd.Immutable)
            {
                imm.Flushed.TrySetException(Wrap(e));
            }
        }
    }

    /// <summary>Holds the mutex. A resume attempt (<see cref="ErrorRecovery"/>) starts: only its memtable switch passes the write queue.</summary>
    public void BeginResume()
    {
        _mutex.AssertHeld();
        Resuming = true;
    }

    /// <summary>
    /// Holds the mutex. The resume attempt ended: with <paramref name="failure"/> null every memtable
    /// is in a table and the error is cleared; otherwise <paramref name="failure"/> is the error that
    /// now stops the database and the flushes still pending fail. Wakes every waiter either way.
    /// </summary>
    public void EndResume(Exception? failure)
    {
        _mutex.AssertHeld();
        Resuming = false;
        Error = failure; // on failure, the error that now stops the database (IsNoSpace looks inside)
        if (failure != null)
        {
            FailPendingFlushes(failure);
        }
        _mutex.PulseAll();
    }

    private void ScheduleAutomaticResume()
    {
        if (AutoResumeScheduled || _closing() || _options.MaxBackgroundErrorResumeCount == 0 || !StorageErrors.IsNoSpace(Error))
        {
            return;
        }
        AutoResumeScheduled = true;
        var thread = new Thread(AutomaticResumeLoop) { IsBackground = true, Name = "KvEngine error recovery" };
        thread.Start();
    }

    private void AutomaticResumeLoop()
    {
        bool exhausted = true;
        try
        {
            for (int attempt = 0; attempt < _options.MaxBackgroundErrorResumeCount; attempt++)
            {
                if (_shutdown().WaitOne(_options.BackgroundErrorResumeRetryInterval))
                {
                    exhausted = false;
                    return; // closing
                }
                if (_automaticResume(out Exception? failure) || !StorageErrors.IsNoSpace(failure))
                {
                    exhausted = false;
                    return; // recovered, or now stopped by an error only Resume() may clear
                }
            }
        }
        catch (ObjectDisposedException)
        {
            exhausted = false; // the database closed while the loop was between attempts
        }
        finally
        {
            using (_mutex.Lock())
            {
                AutoResumeScheduled = false;
                // An error recorded after a successful resume, while this loop was still winding
                // down, gets a loop of its own; an error that used up every attempt waits for Resume().
                if (!exhausted && Error != null)
                {
                    ScheduleAutomaticResume();
                }
            }
        }
    }
}
