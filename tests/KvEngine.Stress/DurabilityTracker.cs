namespace KvEngine.Stress;

/// <summary>
/// What is durable and what is only acknowledged, per key, for the power-loss and fault modes. A
/// logical clock orders events: each write takes a tick when it starts and one when it is
/// acknowledged. A synced write that succeeded makes every write acknowledged before it started
/// durable (the WAL is one sequence; a sync covers what precedes), and a successful Flush() does
/// the same for every write acknowledged before the flush started: <see cref="Watermark"/> is the
/// highest such start. Per key a <see cref="KeyHistory"/>; per multi-key operation the keys and
/// positions it wrote (for the atomicity check). A write is recorded before the database call
/// (<see cref="Record"/>, unacknowledged) and acknowledged after it returned
/// (<see cref="Acknowledge"/>). With a <see cref="DurabilityJournal"/> (<see cref="Load"/>) the
/// clock, the watermark and every record also live in that file, so the next process verifies what
/// a power cut and a SIGKILL left.
/// <para>
/// Thread-safety: the clock and watermark are atomic; histories and operations are partitioned by
/// the owning thread (one dictionary each) and read by the verifier only after workers stopped.
/// </para>
/// </summary>
internal sealed class DurabilityTracker : IDisposable
{
    private readonly Dictionary<long, KeyHistory>[] _histories;
    private readonly Dictionary<long, List<(long Key, int Position)>>[] _ops;
    private readonly DurabilityJournal? _journal;
    private long _clock;
    private long _watermark;
    private long _opIds;

    public DurabilityTracker(int threads)
        : this(threads, null)
    {
    }

    private DurabilityTracker(int threads, DurabilityJournal? journal)
    {
        _journal = journal;
        _histories = new Dictionary<long, KeyHistory>[threads];
        _ops = new Dictionary<long, List<(long, int)>>[threads];
        for (int i = 0; i < threads; i++)
        {
            _histories[i] = new Dictionary<long, KeyHistory>();
            _ops[i] = new Dictionary<long, List<(long, int)>>();
        }
    }

    /// <summary>Every write acknowledged before this clock value is durable.</summary>
    public long Watermark => Volatile.Read(ref WatermarkRef);

    private ref long ClockRef => ref _journal != null ? ref _journal.Clock : ref _clock;

    private ref long WatermarkRef => ref _journal != null ? ref _journal.Watermark : ref _watermark;

    /// <summary>
    /// A tracker whose state is <paramref name="journal"/>'s (which it then owns): the histories its
    /// records describe, in slot order, and its clock and watermark.
    /// </summary>
    public static DurabilityTracker Load(DurabilityJournal journal, int threads)
    {
        var t = new DurabilityTracker(threads, journal);
        foreach ((int thread, long key, ExpectedValue initial, HistoryEntry entry, bool multiKey) in journal.Records())
        {
            if (thread >= 0 && thread < threads)
            {
                t.AddToHistory(thread, key, initial, entry, multiKey);
            }
        }
        return t;
    }

    /// <summary>(writes recorded, acknowledged, acknowledged with Sync=true) since the last reset.</summary>
    public (long Writes, long Acknowledged, long Synced) Counts()
    {
        long writes = 0, acked = 0, synced = 0;
        foreach (Dictionary<long, KeyHistory> d in _histories)
        {
            foreach (KeyHistory h in d.Values)
            {
                foreach (HistoryEntry e in h.Entries)
                {
                    writes++;
                    acked += e.Acknowledged ? 1 : 0;
                    synced += e.Synced ? 1 : 0;
                }
            }
        }
        return (writes, acked, synced);
    }

    public long Tick() => Interlocked.Increment(ref ClockRef);

    public long NextOpId() => Interlocked.Increment(ref _journal != null ? ref _journal.OpIds : ref _opIds);

    /// <summary>A sync write or a flush that started at <paramref name="start"/> succeeded.</summary>
    public void MarkDurableBefore(long start)
    {
        ref long watermark = ref WatermarkRef;
        long cur = Volatile.Read(ref watermark);
        while (start > cur)
        {
            long seen = Interlocked.CompareExchange(ref watermark, start, cur);
            if (seen == cur)
            {
                return;
            }
            cur = seen;
        }
    }

    /// <summary>
    /// Appends a write of <paramref name="key"/> (owned by <paramref name="thread"/>) before its
    /// database call; <paramref name="initial"/> is used when it is the key's first in this cycle.
    /// Returns the journal slot (-1 without a journal) for <see cref="Acknowledge"/>.
    /// </summary>
    public long Record(int thread, long key, ExpectedValue initial, in HistoryEntry entry, bool multiKey)
    {
        long slot = _journal?.Append(thread, key, initial, entry, multiKey) ?? -1;
        AddToHistory(thread, key, initial, entry, multiKey);
        return slot;
    }

    /// <summary>The last write recorded for <paramref name="key"/> (in <paramref name="slot"/>) was acknowledged at <paramref name="ack"/>.</summary>
    public void Acknowledge(int thread, long key, long slot, long ack, bool synced)
    {
        List<HistoryEntry> entries = _histories[thread][key].Entries;
        entries[^1] = entries[^1] with { Ack = ack, Synced = synced };
        if (slot >= 0)
        {
            _journal!.Acknowledge(slot, ack, synced);
        }
    }

    private void AddToHistory(int thread, long key, ExpectedValue initial, in HistoryEntry entry, bool multiKey)
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
        _journal?.Reset();
    }

    public void Dispose() => _journal?.Dispose();
}
