using KvEngine.RateLimiting;

namespace KvEngine;

/// <summary>
/// Caps the rate at which flushes and compactions write their tables (RocksDB's
/// GenericRateLimiter, NewGenericRateLimiter, in its default kWritesOnly mode), so compaction
/// bursts leave the device to reads and to the write-ahead log. Set it as
/// <see cref="KvOptions.RateLimiter"/>; one instance may be shared by several databases, which
/// then share its budget, as RocksDB's shared_ptr is.
/// <para>
/// Every <see cref="RefillPeriod"/> the limiter adds <see cref="SingleBurstBytes"/>
/// (<see cref="BytesPerSecond"/> x the period, at least 1 byte) to its budget, unless that much is
/// still left. A write takes from the budget before it reaches the file; a write larger than
/// <see cref="SingleBurstBytes"/> is charged in pieces of at most that size (RocksDB's
/// RequestToken), each written once granted. A request the budget cannot cover waits in the queue
/// of its <see cref="KvIOPriority"/>: flushes at <see cref="KvIOPriority.High"/>, compactions at
/// <see cref="KvIOPriority.Low"/>. At each refill the queues are served in priority order, except
/// that every <see cref="Fairness"/>-th refill serves low priority first (RocksDB draws that turn
/// at random, with the same probability 1/fairness). What is charged: the table files flushes
/// (including those written while the write-ahead log is replayed at open) and compactions write,
/// byte for byte. Not charged, as in RocksDB: the write-ahead log, the MANIFEST, the OPTIONS file,
/// reads, and files written by <see cref="SstFileWriter"/>, ingestion or checkpoints.
/// </para>
/// <para>
/// Waiting threads sleep on a monitor: one of them waits for the next refill with a timeout and
/// performs it, the others until woken (RocksDB's scheme). A database that closes cancels the
/// waits of its own jobs, so <see cref="KvDb.Dispose"/> returns promptly however low the rate; the
/// limiter itself has nothing to dispose. The limiter is not recorded in the OPTIONS file (RocksDB
/// 7.8 writes no rate_limiter line either).
/// </para>
/// <para>Thread-safety: every member may be called from any thread.</para>
/// </summary>
public sealed class KvRateLimiter
{
    /// <summary>RocksDB's default refill period, 100 ms.</summary>
    public static readonly TimeSpan DefaultRefillPeriod = TimeSpan.FromMilliseconds(100);

    /// <summary>RocksDB's default fairness, 10.</summary>
    public const int DefaultFairness = 10;

    private readonly object _lock = new();
    private readonly TokenBucket _bucket;
    private readonly RateLimiterClock _clock;
    private bool _refillWaitPending; // a waiter sleeps until the next refill (RocksDB's wait_until_refill_pending_)

    /// <summary>A limiter of <paramref name="bytesPerSecond"/> with RocksDB's defaults: 100 ms refill period, fairness 10.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="bytesPerSecond"/> is not positive.</exception>
    public KvRateLimiter(long bytesPerSecond)
        : this(bytesPerSecond, DefaultRefillPeriod, DefaultFairness)
    {
    }

    /// <summary>
    /// A limiter of <paramref name="bytesPerSecond"/>, refilled every <paramref name="refillPeriod"/>
    /// (at least 1 microsecond; a shorter period smooths the rate at the cost of more wake-ups),
    /// serving low priority first every <paramref name="fairness"/>-th refill (1 to 100; larger
    /// values are taken as 100, as RocksDB does).
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">A value is not positive, or the period is under 1 microsecond.</exception>
    public KvRateLimiter(long bytesPerSecond, TimeSpan refillPeriod, int fairness = DefaultFairness)
        : this(bytesPerSecond, refillPeriod, fairness, RateLimiterClock.Default)
    {
    }

    internal KvRateLimiter(long bytesPerSecond, TimeSpan refillPeriod, int fairness, RateLimiterClock clock)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(bytesPerSecond);
        ArgumentOutOfRangeException.ThrowIfLessThan(refillPeriod, TimeSpan.FromMicroseconds(1));
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(fairness);
        _clock = clock;
        _bucket = new TokenBucket(bytesPerSecond, refillPeriod.Ticks / TimeSpan.TicksPerMicrosecond, fairness, clock.NowMicros());
    }

    /// <summary>The rate (RocksDB: GetBytesPerSecond).</summary>
    public long BytesPerSecond
    {
        get
        {
            lock (_lock)
            {
                return _bucket.BytesPerSecond;
            }
        }
    }

    /// <summary>The refill period.</summary>
    public TimeSpan RefillPeriod => TimeSpan.FromMicroseconds(_bucket.RefillPeriodMicros);

    /// <summary>Low priority is served first every this many refills (capped at 100).</summary>
    public int Fairness => _bucket.Fairness;

    /// <summary>
    /// The bytes one refill adds, and so the largest piece one request is granted at once
    /// (RocksDB: GetSingleBurstBytes).
    /// </summary>
    public long SingleBurstBytes
    {
        get
        {
            lock (_lock)
            {
                return _bucket.RefillBytesPerPeriod;
            }
        }
    }

    /// <summary>
    /// Changes the rate at run time (RocksDB: SetBytesPerSecond); the next refill adds the new
    /// period's bytes, and requests already waiting are served at the new rate.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="bytesPerSecond"/> is not positive.</exception>
    public void SetBytesPerSecond(long bytesPerSecond)
    {
        lock (_lock)
        {
            _bucket.SetBytesPerSecond(bytesPerSecond);
        }
    }

    /// <summary>The bytes granted so far at every priority (RocksDB: GetTotalBytesThrough(IO_TOTAL)).</summary>
    public long GetTotalBytesThrough()
    {
        lock (_lock)
        {
            return _bucket.TotalBytesThrough();
        }
    }

    /// <summary>The bytes granted so far at <paramref name="priority"/> (RocksDB: GetTotalBytesThrough).</summary>
    public long GetTotalBytesThrough(KvIOPriority priority)
    {
        CheckPriority(priority);
        lock (_lock)
        {
            return _bucket.BytesThrough(priority);
        }
    }

    /// <summary>
    /// The requests made so far at every priority (RocksDB: GetTotalRequests(IO_TOTAL)); a write
    /// larger than <see cref="SingleBurstBytes"/> counts once per piece.
    /// </summary>
    public long GetTotalRequests()
    {
        lock (_lock)
        {
            return _bucket.TotalRequests();
        }
    }

    /// <summary>The requests made so far at <paramref name="priority"/> (RocksDB: GetTotalRequests).</summary>
    public long GetTotalRequests(KvIOPriority priority)
    {
        CheckPriority(priority);
        lock (_lock)
        {
            return _bucket.Requests(priority);
        }
    }

    /// <summary>
    /// Takes <paramref name="bytes"/> from the budget for I/O of the caller's own at
    /// <paramref name="priority"/>, blocking until granted: in pieces of at most
    /// <see cref="SingleBurstBytes"/> (RocksDB's Request asks the caller to split; this does it).
    /// Pieces granted before a cancellation stay spent.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="bytes"/> is negative, or the priority is unknown.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled while the request waited.</exception>
    public void Request(long bytes, KvIOPriority priority, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(bytes);
        CheckPriority(priority);
        while (bytes > 0)
        {
            bytes -= RequestToken(bytes, priority, cancellationToken);
        }
    }

    /// <summary>
    /// RocksDB's RequestToken: takes min(<paramref name="bytes"/>, <see cref="SingleBurstBytes"/>)
    /// from the budget, waiting until granted, and returns that amount (the caller writes that
    /// much, then asks again for the rest). <paramref name="bytes"/> must be positive.
    /// </summary>
    internal long RequestToken(long bytes, KvIOPriority priority, CancellationToken cancellationToken)
    {
        RateLimiterRequest request;
        CancellationTokenRegistration registration = default;
        try
        {
            lock (_lock)
            {
                bytes = Math.Min(bytes, _bucket.RefillBytesPerPeriod);
                if (_bucket.TryGrant(bytes, priority))
                {
                    return bytes;
                }
                request = new RateLimiterRequest(bytes, priority);
                _bucket.Enqueue(request);
                if (cancellationToken.CanBeCanceled)
                {
                    // Runs at once when already cancelled: the lock is reentrant, and the loop
                    // below sees the cancellation before it waits.
                    registration = cancellationToken.UnsafeRegister(static s => ((KvRateLimiter)s!).WakeAll(), this);
                }
                WaitLocked(request, cancellationToken);
            }
        }
        finally
        {
            registration.Dispose(); // outside the lock: Dispose waits for a callback that may be taking it
        }
        return bytes;
    }

    /// <summary>The requests waiting at <paramref name="priority"/> (tests wait for a job to block).</summary>
    internal int Queued(KvIOPriority priority)
    {
        lock (_lock)
        {
            return _bucket.Queued(priority);
        }
    }

    private static void CheckPriority(KvIOPriority priority)
    {
        if ((uint)priority > (uint)KvIOPriority.User)
        {
            throw new ArgumentOutOfRangeException(nameof(priority), priority, "Not an I/O priority.");
        }
    }

    /// <summary>
    /// RocksDB's Request loop, under the lock: one waiter sleeps until the next refill is due and
    /// then performs it; the others sleep until a refill or a departure wakes them. Whoever leaves
    /// the refill wait, and whoever gives up, wakes the rest, so a new refill waiter is chosen.
    /// </summary>
    private void WaitLocked(RateLimiterRequest request, CancellationToken cancellationToken)
    {
        while (!request.Granted)
        {
            if (cancellationToken.IsCancellationRequested)
            {
                _bucket.Remove(request);
                Monitor.PulseAll(_lock);
                throw new OperationCanceledException(cancellationToken);
            }
            long now = _clock.NowMicros();
            long untilRefill = _bucket.NextRefillMicros - now;
            if (untilRefill > 0)
            {
                if (_refillWaitPending)
                {
                    Monitor.Wait(_lock);
                }
                else
                {
                    _refillWaitPending = true;
                    try
                    {
                        _clock.Wait(_lock, untilRefill);
                    }
                    finally
                    {
                        _refillWaitPending = false;
                        Monitor.PulseAll(_lock);
                    }
                }
            }
            else
            {
                _bucket.Refill(now);
                Monitor.PulseAll(_lock);
            }
        }
    }

    private void WakeAll()
    {
        lock (_lock)
        {
            Monitor.PulseAll(_lock);
        }
    }
}
