namespace KvEngine.Db.Background;

/// <summary>
/// The background threads that run flushes and compactions (RocksDB's background thread pool
/// with its scheduling of BGWorkFlush and BGWorkCompaction): <see cref="KvOptions.MaxBackgroundJobs"/>
/// threads, each asking the database for a job (<see cref="IBackgroundWorker.TryRunJob"/>, the <see cref="BackgroundJobPicker"/>) and
/// sleeping on a wake semaphore when there is none, for at most <see cref="IdleCheckInterval"/>: a
/// thread that slept that long without a wake does the database's idle housekeeping
/// (<see cref="IBackgroundWorker.OnIdle"/>) and then looks for a job again, so idle threads poll
/// once a second (a missing <see cref="Wake"/> delays work by up to that, where it used to stall it). <see cref="Wake"/> is called at every memtable
/// switch, after every job and when an error clears; a thread that finished a job wakes an idle
/// one, so work a job made possible is picked up. <see cref="Shutdown"/> cancels running
/// compactions (<see cref="Cancellation"/>) and joins the threads.
/// <para>
/// Thread-safety: every member may be called from any thread; <see cref="Start"/> and
/// <see cref="Shutdown"/> once each, in that order. The closing flag is the database's (set under
/// its mutex before <see cref="Shutdown"/> wakes the threads).
/// </para>
/// </summary>
internal sealed class BackgroundScheduler : IDisposable
{
    /// <summary>How long a thread sleeps without a job before it does idle housekeeping (<see cref="IBackgroundWorker.OnIdle"/>).</summary>
    public static readonly TimeSpan IdleCheckInterval = TimeSpan.FromSeconds(1);

    private readonly SemaphoreSlim _wake = new(0);
    private readonly CancellationTokenSource _shutdown = new();
    private readonly Func<bool> _closing;
    private IBackgroundWorker? _worker; // set by Start, before the threads start
    private Thread[] _threads = Array.Empty<Thread>();

    /// <param name="closing">True once the database is closing (read by idle threads before they sleep again).</param>
    public BackgroundScheduler(Func<bool> closing)
    {
        _closing = closing;
    }

    /// <summary>Cancelled when the database closes: running compactions stop.</summary>
    public CancellationToken Cancellation => _shutdown.Token;

    /// <summary>Starts <paramref name="threads"/> threads asking <paramref name="worker"/> for jobs.</summary>
    public void Start(IBackgroundWorker worker, int threads)
    {
        _worker = worker;
        _threads = new Thread[threads];
        for (int i = 0; i < _threads.Length; i++)
        {
            _threads[i] = new Thread(Loop)
            {
                IsBackground = true,
                Name = "KvEngine background " + i,
            };
            _threads[i].Start();
        }
    }

    /// <summary>Lets one sleeping thread look for work.</summary>
    public void Wake()
    {
        if (_closing())
        {
            return; // the threads are stopping (or gone): a read's compaction request after close is dropped
        }
        try
        {
            _wake.Release();
        }
        catch (ObjectDisposedException)
        {
            // A read that pinned its state before the close asks after the scheduler was disposed.
        }
    }

    /// <summary>Cancels running compactions (before the caller waits for manual ones).</summary>
    public void Cancel() => _shutdown.Cancel();

    /// <summary>Wakes every thread and joins them; the database's closing flag must be set.</summary>
    public void Shutdown()
    {
        _shutdown.Cancel();
        _wake.Release(Math.Max(1, _threads.Length));
        foreach (Thread t in _threads)
        {
            t.Join();
        }
    }

    public void Dispose()
    {
        _wake.Dispose();
        _shutdown.Dispose();
    }

    private void Loop()
    {
        while (!_closing())
        {
            if (!_worker!.TryRunJob())
            {
                if (_closing())
                {
                    return;
                }
                if (!_wake.Wait(IdleCheckInterval) && !_closing())
                {
                    _worker.OnIdle(); // a second without work: free what idle families keep
                }
                continue;
            }
            if (_wake.CurrentCount == 0)
            {
                _wake.Release(); // let an idle thread look for work this job made possible
            }
        }
    }
}
