namespace KvEngine.RateLimiting;

/// <summary>
/// The accounting of a <see cref="KvRateLimiter"/> without its threads (RocksDB's
/// GenericRateLimiter less its mutex and condition variables): a budget of bytes refilled by
/// <see cref="RefillBytesPerPeriod"/> once per refill period, one FIFO queue per
/// <see cref="KvIOPriority"/>, and the totals of requests and granted bytes per priority.
/// <para>
/// Invariants, as RocksDB's: a request is granted at once when the budget covers it whole
/// (<see cref="TryGrant"/>), else it is queued whole; a refill adds one period's bytes only when
/// less than that is left (so at most a period's worth plus the remainder too small for the
/// request that could not take it carries over), then grants queued requests in priority order
/// (<see cref="User"/>, <see cref="KvIOPriority.High"/>, <see cref="KvIOPriority.Mid"/>,
/// <see cref="KvIOPriority.Low"/>; every <see cref="Fairness"/>-th refill the last three go in
/// reverse order, so low priority is served first then), front to back. The first request the
/// budget cannot cover whole takes what is left (a partial grant, so a request made before a rate
/// cut cannot starve) and the refill stops there. Over any span, the bytes granted never exceed
/// those refilled. A request is either in exactly one queue or granted.
/// </para>
/// <para>
/// RocksDB draws "low priority first" at random with probability 1/fairness; this bucket takes
/// every fairness-th refill instead: the same share, and a schedule tests can predict.
/// </para>
/// <para>Not thread-safe: its owner calls every member under one lock.</para>
/// </summary>
internal sealed class TokenBucket
{
    /// <summary>RocksDB caps fairness at 100.</summary>
    public const int MaxFairness = 100;

    private const KvIOPriority User = KvIOPriority.User;
    private const int Priorities = (int)KvIOPriority.User + 1;

    private static readonly KvIOPriority[] s_usualOrder = [KvIOPriority.User, KvIOPriority.High, KvIOPriority.Mid, KvIOPriority.Low];
    private static readonly KvIOPriority[] s_fairOrder = [KvIOPriority.User, KvIOPriority.Low, KvIOPriority.Mid, KvIOPriority.High];

    private readonly LinkedList<RateLimiterRequest>[] _queues = new LinkedList<RateLimiterRequest>[Priorities];
    private readonly long[] _bytesThrough = new long[Priorities];
    private readonly long[] _requests = new long[Priorities];
    private long _refills;

    /// <param name="bytesPerSecond">The rate, above 0.</param>
    /// <param name="refillPeriodMicros">The refill period in microseconds, above 0.</param>
    /// <param name="fairness">Low priority goes first every this many refills (1..100; above 100 is taken as 100).</param>
    /// <param name="nowMicros">The clock's reading now: the first refill is due at once, as RocksDB's.</param>
    public TokenBucket(long bytesPerSecond, long refillPeriodMicros, int fairness, long nowMicros)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(bytesPerSecond);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(refillPeriodMicros);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(fairness);
        RefillPeriodMicros = refillPeriodMicros;
        Fairness = Math.Min(fairness, MaxFairness);
        BytesPerSecond = bytesPerSecond;
        RefillBytesPerPeriod = RefillBytes(bytesPerSecond, refillPeriodMicros);
        NextRefillMicros = nowMicros;
        for (int i = 0; i < Priorities; i++)
        {
            _queues[i] = new LinkedList<RateLimiterRequest>();
        }
    }

    public long BytesPerSecond { get; private set; }

    public long RefillPeriodMicros { get; }

    public int Fairness { get; }

    /// <summary>What one refill adds: the largest request granted in one piece (RocksDB's GetSingleBurstBytes).</summary>
    public long RefillBytesPerPeriod { get; private set; }

    /// <summary>The budget left.</summary>
    public long AvailableBytes { get; private set; }

    /// <summary>When the next refill is due (the clock's microseconds).</summary>
    public long NextRefillMicros { get; private set; }

    /// <summary>Refills done so far.</summary>
    public long Refills => _refills;

    /// <summary>
    /// RocksDB's CalculateRefillBytesPerPeriod: rate x period, at least 1 byte, and long.MaxValue /
    /// 1,000,000 when the product would overflow.
    /// </summary>
    public static long RefillBytes(long bytesPerSecond, long refillPeriodMicros) =>
        long.MaxValue / bytesPerSecond < refillPeriodMicros
            ? long.MaxValue / 1_000_000
            : Math.Max(1, bytesPerSecond * refillPeriodMicros / 1_000_000);

    /// <summary>Changes the rate; the next refill adds the new period's bytes (those left stay).</summary>
    public void SetBytesPerSecond(long bytesPerSecond)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(bytesPerSecond);
        BytesPerSecond = bytesPerSecond;
        RefillBytesPerPeriod = RefillBytes(bytesPerSecond, RefillPeriodMicros);
    }

    /// <summary>
    /// Counts a request of <paramref name="bytes"/> (at most <see cref="RefillBytesPerPeriod"/>)
    /// and grants it when the budget covers it whole; otherwise the caller queues it
    /// (<see cref="Enqueue"/>) without counting it again.
    /// </summary>
    public bool TryGrant(long bytes, KvIOPriority priority)
    {
        _requests[(int)priority]++;
        if (AvailableBytes < bytes)
        {
            return false;
        }
        AvailableBytes -= bytes;
        _bytesThrough[(int)priority] += bytes;
        return true;
    }

    public void Enqueue(RateLimiterRequest request) =>
        request.Node = _queues[(int)request.Priority].AddLast(request);

    /// <summary>Takes a queued request out (its waiter gave up); bytes granted to it in part stay spent.</summary>
    public void Remove(RateLimiterRequest request)
    {
        if (request.Node is { } node)
        {
            _queues[(int)request.Priority].Remove(node);
            request.Node = null;
        }
    }

    /// <summary>The requests waiting at <paramref name="priority"/>.</summary>
    public int Queued(KvIOPriority priority) => _queues[(int)priority].Count;

    /// <summary>True when any request waits.</summary>
    public bool AnyQueued()
    {
        foreach (LinkedList<RateLimiterRequest> q in _queues)
        {
            if (q.Count > 0)
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>
    /// RocksDB's RefillBytesAndGrantRequests: schedules the next refill a period from
    /// <paramref name="nowMicros"/>, adds a period's bytes unless that much is left, and grants
    /// queued requests (see the class comment).
    /// </summary>
    public void Refill(long nowMicros)
    {
        NextRefillMicros = nowMicros + RefillPeriodMicros;
        if (AvailableBytes < RefillBytesPerPeriod)
        {
            AvailableBytes += RefillBytesPerPeriod;
        }
        _refills++;
        KvIOPriority[] order = _refills % Fairness == 0 ? s_fairOrder : s_usualOrder;
        foreach (KvIOPriority priority in order)
        {
            LinkedList<RateLimiterRequest> queue = _queues[(int)priority];
            while (queue.First is { } node)
            {
                RateLimiterRequest r = node.Value;
                if (AvailableBytes < r.Remaining)
                {
                    r.Remaining -= AvailableBytes;
                    _bytesThrough[(int)priority] += AvailableBytes;
                    AvailableBytes = 0;
                    return;
                }
                AvailableBytes -= r.Remaining;
                _bytesThrough[(int)priority] += r.Remaining;
                r.Remaining = 0;
                r.Granted = true;
                queue.RemoveFirst();
                r.Node = null;
            }
        }
    }

    public long BytesThrough(KvIOPriority priority) => _bytesThrough[(int)priority];

    public long Requests(KvIOPriority priority) => _requests[(int)priority];

    public long TotalBytesThrough() => Sum(_bytesThrough);

    public long TotalRequests() => Sum(_requests);

    private static long Sum(long[] values)
    {
        long sum = 0;
        foreach (long v in values)
        {
            sum += v;
        }
        return sum;
    }
}
