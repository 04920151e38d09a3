namespace KvEngine.Stress;

/// <summary>
/// Verifies a whole database against the expected state after an open (and so after a crash):
/// one full scan, every key compared. Without a <see cref="DurabilityTracker"/> (the SIGKILL mode)
/// a key must hold its committed state, or when its pending marker is set either state. With one
/// (the in-process modes) a key must hold a state from its history no older than its last durable
/// write; after a power loss the survivors must also form a prefix (nothing acknowledged before a
/// surviving write started may be missing) and WriteBatch/DeleteRange operations must survive
/// whole. With several column families each family is scanned for its own keys (key i in family
/// i % N), so a write that landed in the wrong family, or a family that lost its data, shows.
/// Afterwards the expected state is set to what was found. Not thread-safe: workers must
/// be stopped.
/// </summary>
internal sealed class DbVerifier
{
    private readonly StressFlags _flags;
    private readonly ExpectedState _state;
    private readonly DurabilityTracker? _tracker;
    private readonly StressStats _stats;
    private readonly Dictionary<long, (int Min, int Max)> _matched = new();

    public DbVerifier(StressFlags flags, ExpectedState state, DurabilityTracker? tracker, StressStats stats)
    {
        _flags = flags;
        _state = state;
        _tracker = tracker;
        _stats = stats;
    }

    /// <summary>
    /// Checks every key; <paramref name="powerLost"/> says unsynced writes may be gone. Throws
    /// <see cref="VerificationException"/> with the key, the expected states and the value found.
    /// </summary>
    public void VerifyAll(KvDb db, bool powerLost, string when)
    {
        _matched.Clear();
        ColumnFamilyHandle[] families = StressFamilies.Handles(db, _flags.ColumnFamilies);
        int n = families.Length;
        for (int f = 0; f < n; f++)
        {
            // Family f holds keys f, f + n, f + 2n, ... and nothing else.
            string where = n == 1 ? when : $"{when} (family {families[f]})";
            long next = f;
            using (KvIterator it = db.NewIterator(families[f]))
            {
                for (it.SeekToFirst(); it.Valid; it.Next())
                {
                    long k = StressKeys.Index(it.Key);
                    if (k < next || k >= _flags.MaxKey || StressFamilies.Of(k, n) != f)
                    {
                        throw new VerificationException($"{where}: the database holds key {Convert.ToHexString(it.Key)}, which kvstress never writes there (max_key {_flags.MaxKey}, {n} families)");
                    }
                    for (; next < k; next += n)
                    {
                        VerifyKey(next, null, powerLost, where);
                    }
                    VerifyKey(k, it.Value.ToArray(), powerLost, where);
                    next = k + n;
                }
            }
            for (; next < _flags.MaxKey; next += n)
            {
                VerifyKey(next, null, powerLost, where);
            }
        }
        if (_tracker != null)
        {
            CheckOperationsWhole(when);
            if (powerLost)
            {
                CheckPrefix(when);
            }
            Resolve();
        }
        _stats.Add(StressCounter.KeysVerified, _flags.MaxKey);
    }

    private void VerifyKey(long key, byte[]? value, bool powerLost, string when)
    {
        int mult = _flags.ValueSizeMult;
        int owner = KeyStripes.Owner(key, _flags.Threads, _flags.MaxKey);
        KeyHistory? h = _tracker?.History(owner, key);
        if (h == null)
        {
            ExpectedValue c = _state.Committed(key), p = _state.PendingSlot(key);
            if (c.Matches(value, key, mult))
            {
                _state.Resolve(key, c);
            }
            else if (p.Pending && p.Settled.Matches(value, key, mult))
            {
                _state.Resolve(key, p.Settled);
                _stats.Add(StressCounter.PendingResolved);
            }
            else
            {
                throw new VerificationException($"{when}: key {key} is {StressKeys.Describe(key, value, mult)}, expected {c}" + (p.Pending ? $" or {p}" : ""));
            }
            return;
        }
        int durable = LastDurable(h, powerLost);
        int min = -1, max = -1, older = -1;
        for (int pos = 0; pos < h.Count; pos++)
        {
            if (h.At(pos).Settled.Matches(value, key, mult))
            {
                if (pos < durable)
                {
                    older = pos;
                }
                else
                {
                    min = min < 0 ? pos : min;
                    max = pos;
                }
            }
        }
        if (min < 0)
        {
            string found = StressKeys.Describe(key, value, mult);
            throw new VerificationException(older >= 0
                ? $"{when}: LOST WRITE: key {key} is {found}, the state of history position {older}, but position {durable} was durable. History: {h.Describe(0)}"
                : $"{when}: key {key} is {found}, which no write since position {durable} produced. History: {h.Describe(0)}");
        }
        _matched[key] = (min, max);
        for (int pos = durable + 1; powerLost && pos < h.Count; pos++)
        {
            _stats.Add(pos <= max ? StressCounter.UnsyncedWritesSurvived : StressCounter.UnsyncedWritesLost);
        }
    }

    // The last history position that must have survived: with the power lost, the last write
    // synced or acknowledged before the watermark; otherwise the last acknowledged one.
    private int LastDurable(KeyHistory h, bool powerLost)
    {
        long watermark = _tracker!.Watermark;
        int d = 0;
        for (int i = 0; i < h.Entries.Count; i++)
        {
            HistoryEntry e = h.Entries[i];
            if (e.Acknowledged && (!powerLost || e.Synced || e.Ack < watermark))
            {
                d = i + 1;
            }
        }
        return d;
    }

    // A WriteBatch or DeleteRange that survived on one key survived on all of its keys. It
    // survived on a key when the key's state is the one it wrote and no other allowed position's
    // (a later write of the key may have produced the same state, e.g. a second delete).
    private void CheckOperationsWhole(string when)
    {
        foreach (KeyValuePair<long, (int Min, int Max)> m in _matched)
        {
            if (m.Value.Min == 0 || m.Value.Min != m.Value.Max)
            {
                continue;
            }
            int owner = KeyStripes.Owner(m.Key, _flags.Threads, _flags.MaxKey);
            HistoryEntry e = _tracker!.History(owner, m.Key)!.Entries[m.Value.Min - 1];
            List<(long Key, int Position)>? op = _tracker.Operation(owner, e.OpId);
            if (op == null)
            {
                continue;
            }
            foreach ((long key, int pos) in op)
            {
                if (_matched[key].Max < pos)
                {
                    throw new VerificationException($"{when}: TORN WRITE: operation {e.OpId} is visible on key {m.Key} but not on key {key} " +
                        $"(it is at history position {_matched[key].Max}, the operation wrote position {pos}). " +
                        $"History of {m.Key}: {_tracker.History(owner, m.Key)!.Describe(0)}. History of {key}: {_tracker.History(owner, key)!.Describe(0)}");
                }
            }
        }
    }

    // Recovery after a power loss yields a prefix of the write order: every write acknowledged
    // before a surviving write started must have survived (or been overwritten by a survivor).
    private void CheckPrefix(string when)
    {
        long cut = 0;
        long cutKey = -1;
        foreach (KeyValuePair<long, (int Min, int Max)> m in _matched)
        {
            if (m.Value.Min > 0)
            {
                HistoryEntry e = _tracker!.History(KeyStripes.Owner(m.Key, _flags.Threads, _flags.MaxKey), m.Key)!.Entries[m.Value.Min - 1];
                if (e.Start > cut)
                {
                    cut = e.Start;
                    cutKey = m.Key;
                }
            }
        }
        foreach (KeyValuePair<long, (int Min, int Max)> m in _matched)
        {
            KeyHistory h = _tracker!.History(KeyStripes.Owner(m.Key, _flags.Threads, _flags.MaxKey), m.Key)!;
            for (int i = h.Entries.Count - 1; i >= 0; i--)
            {
                if (h.Entries[i].Ack < cut)
                {
                    if (m.Value.Max < i + 1)
                    {
                        throw new VerificationException($"{when}: NOT A PREFIX: key {m.Key} lost position {i + 1} ({h.Entries[i]}), acknowledged before the write " +
                            $"to key {cutKey} that survived started (clock {cut}); key {m.Key} is at position {m.Value.Max}. History: {h.Describe(0)}");
                    }
                    break;
                }
            }
        }
    }

    // The expected state becomes what was found; bases stay above every base used so far.
    private void Resolve()
    {
        foreach (KeyValuePair<long, (int Min, int Max)> m in _matched)
        {
            KeyHistory h = _tracker!.History(KeyStripes.Owner(m.Key, _flags.Threads, _flags.MaxKey), m.Key)!;
            _state.Resolve(m.Key, h.At(m.Value.Max).Settled, h.MaxBase());
        }
    }
}
