using KvEngine.Storage;

namespace KvEngine.Db;

/// <summary>
/// The background-error state (RocksDB's ErrorHandler): the first error of a WAL write, memtable
/// insert or switch, flush or compaction stops writes until a resume clears it; how many were
/// recorded (rocksdb.background-errors); and the automatic resume loop for a retryable error (no
/// space on the device: <see cref="StorageErrors.IsNoSpace"/>), which retries every
/// <see cref="KvOptions.BackgroundErrorResumeRetryInterval"/>, up to
/// <see cref="KvOptions.MaxBackgroundErrorResumeCount"/> times. The resume itself is the
/// database's (<see cref="ResumeAttempt"/>).
/// <para>
/// Thread-safety: every member is called with the database mutex held, except the loop, which
/// takes it. At most one loop runs at a time (<see cref="AutoResumeScheduled"/>).
/// </para>
/// </summary>
internal sealed class ErrorHandler
{
    private readonly object _mutex;
    private readonly KvOptions _options;
    private readonly Func<bool> _closing;
    private readonly Func<WaitHandle> _shutdown;
    private readonly ResumeAttempt _tryResume;

    /// <param name="mutex">The database mutex.</param>
    /// <param name="options">Retry count and interval.</param>
    /// <param name="closing">True once the database is closing (no loop starts then).</param>
    /// <param name="shutdown">Signalled when the database closes (the loop's wait ends).</param>
    /// <param name="tryResume">One resume attempt of the database.</param>
    public ErrorHandler(object mutex, KvOptions options, Func<bool> closing, Func<WaitHandle> shutdown, ResumeAttempt tryResume)
    {
        _mutex = mutex;
        _options = options;
        _closing = closing;
        _shutdown = shutdown;
        _tryResume = tryResume;
    }

    /// <summary>The error that stops writes; null when there is none.</summary>
    public Exception? Error { get; private set; }

    /// <summary>Background errors recorded since open (rocksdb.background-errors).</summary>
    public long ErrorCount { get; private set; }

    /// <summary>An automatic resume loop is running.</summary>
    public bool AutoResumeScheduled { get; private set; }

    /// <summary>Records <paramref name="e"/> when no error is set (true then), and starts the automatic resume for a retryable one.</summary>
    public bool Record(Exception e)
    {
        if (Error != null)
        {
            return false;
        }
        Error = e;
        ErrorCount++;
        ScheduleAutomaticResume();
        return true;
    }

    /// <summary>A resume failed with <paramref name="e"/>: it is now the error that stops the database.</summary>
    public void Replace(Exception e) => Error = e;

    /// <summary>A resume succeeded.</summary>
    public void Clear() => Error = null;

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
                if (_tryResume(out Exception? failure) || !StorageErrors.IsNoSpace(failure))
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
            lock (_mutex)
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
