namespace KvEngine.Stress;

/// <summary>
/// What is durable and what is only acknowledged, per key, for the power-loss and fault modes. A
/// logical clock orders events: each write takes a tick when it starts and one when it is
/// acknowledged. A synced write that succeeded makes every write acknowledged before it started
/// durable (the WAL is one sequence; a sync covers what precedes), and a successful Flush() does
/// the same for every write acknowledged before the flush started: <see cref="Watermark"/> is the
/// highest such start. Per key a <see cref="KeyHistory"/>; per multi-key operation the keys and
/// positions it wrote (for the atomicity check).
/// <para>
/// Thread-safety: the clock and watermark are atomic; histories and operations are partitioned by
/// the owning thread (one dictionary each) and read by the verifier only after workers stopped.
/// </para>
/// </summary>
internal sealed class DurabilityTracker
{
    private readonly Dictionary<long, KeyHistory>[] _histories;
    private readonly Dictionary<long, List<(long Key, int Position)>>[] _ops;
    private long _clock;
    private long _watermark;
    private long _opIds;

    public DurabilityTracker(int threads)
    {
        _histories = new Dictionary<long, KeyHistory>[threads];
        _ops = new Dictionary<long, List<(long, int)>>[threads];
        for (int i = 0; i < threads; i++)
        {
            _histories[i] = new Dictionary<long, KeyHistory>();
            _ops[i] = new Dictionary<long, List<(long, int)>>();
        }
    }

    /// <summary>Every write acknowledged before this clock value is durable.</summary>
    public long Watermark => Volatile.Read(ref _watermark);

    public long Tick() => Interlocked.Increment(ref _clock);

    public long NextOpId() => Interlocked.Increment(ref _opIds);

    /// <summary>A sync write or a flush that started at <paramref name="start"/> succeeded.</summary>
    public void MarkDurableBefore(long start)
    {
        long cur = Volatile.Read(ref _watermark);
        while (start > cur)
        {
            long seen = Interlocked.CompareExchange(ref _watermark, start, cur);
            if (seen == cur)
            {
                return;
            }
            cur = seen;
        }
    }

    /// <summary>Appends a write of <paramref name="key"/> (owned by <paramref name="thread"/>); <paramref name="initial"/> is used when it is the key's first in this cycle.</summary>
    public void Record(int thread, long key, ExpectedValue initial, in HistoryEntry entry, bool multiKey)
    {
        if (!_histories[thread].TryGetValue(key, out KeyHistory? h))
        {
            h = new KeyHistory(initial);
            _histories[thread].Add(key, h);
        }
        h.Entries.Add(entry);
        if (multiKey)
        {
            if (!_ops[thread].TryGetValue(entry.OpId, out List<(long, int)>? keys))
            {
                keys = new List<(long, int)>();
                _ops[thread].Add(entry.OpId, keys);
            }
            keys.Add((key, h.Count - 1));
        }
    }

    public KeyHistory? History(int thread, long key) => _histories[thread].TryGetValue(key, out KeyHistory? h) ? h : null;

    /// <summary>The keys and positions written by multi-key operation <paramref name="opId"/>, or null.</summary>
    public List<(long Key, int Position)>? Operation(int thread, long opId) => _ops[thread].TryGetValue(opId, out List<(long, int)>? k) ? k : null;

    /// <summary>Forgets every history after a power-loss verification: what survived is the new durable base.</summary>
    public void Reset()
    {
        foreach (Dictionary<long, KeyHistory> h in _histories)
        {
            h.Clear();
        }
        foreach (Dictionary<long, List<(long, int)>> o in _ops)
        {
            o.Clear();
        }
        _watermark = Volatile.Read(ref _clock);
    }
}
