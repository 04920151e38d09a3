namespace KvEngine.Stress;

/// <summary>
/// One kvstress thread: picks operations by the -*percent flags and checks every read against the
/// expected state. Writes only its own key stripe [<see cref="_lo"/>, <see cref="_hi"/>), reads
/// anywhere (keys of other stripes are checked when no write to them overlapped the read). A write
/// marks its keys pending in <see cref="ExpectedState"/> before the database call and commits
/// them after, and in the in-process modes records itself in the <see cref="DurabilityTracker"/>.
/// With several column families key i is read and written in family i % N
/// (<see cref="StressFamilies"/>); a flush is of every family or of one, a compaction of one.
/// Not thread-safe: owned by one thread for one run.
/// </summary>
internal sealed class StressWorker
{
    private const int MaxSnapshots = 4;
    private const int SnapshotWidth = 64;

    private readonly int _thread;
    private readonly StressFlags _flags;
    private readonly ExpectedState _state;
    private readonly DurabilityTracker? _tracker;
    private readonly StressStats _stats;
    private readonly RunControl _control;
    private readonly Random _rng;
    private readonly long _lo;
    private readonly long _hi;
    private readonly List<SnapshotRecord> _snapshots = new();
    private readonly List<long> _keys = new();
    private readonly List<ExpectedValue> _values = new();
    private ColumnFamilyHandle[] _families = [];

    public StressWorker(int thread, StressFlags flags, ExpectedState state, DurabilityTracker? tracker, StressStats stats, RunControl control, int seed)
    {
        _thread = thread;
        _flags = flags;
        _state = state;
        _tracker = tracker;
        _stats = stats;
        _control = control;
        _rng = new Random(seed);
        _lo = KeyStripes.Lower(thread, flags.Threads, flags.MaxKey);
        _hi = KeyStripes.Upper(thread, flags.Threads, flags.MaxKey);
    }

    /// <summary>Fresh options for opening a checkpoint (the run's file system); needed with -checkpoint_one_in.</summary>
    public Func<KvOptions>? CheckpointOptions { get; init; }

    /// <summary>Operations this worker completed (kept across runs by the runner).</summary>
    public long Done { get; private set; }

    /// <summary>Runs until <paramref name="ops"/> operations are done or the run is stopped.</summary>
    public void Run(KvDb db, long ops)
    {
        try
        {
            _families = StressFamilies.Handles(db, _flags.ColumnFamilies);
            for (long i = 0; i < ops && !_control.Stopped; i++)
            {
                if (!Step(db))
                {
                    return;
                }
                Done++;
                _control.OperationDone();
            }
            ReleaseSnapshots(db, verify: !_control.Stopped);
        }
        catch (VerificationException e)
        {
            if (!_control.PowerLost)
            {
                _stats.Failures.Enqueue($"thread {_thread}: {e.Message}");
                _control.Stop(StopReason.Failure);
            }
        }
        catch (Exception e) when (IsTolerated(e))
        {
            // A read failed on an injected error or after the power was cut: nothing changed.
            _stats.Add(StressCounter.InjectedErrorsSeen);
            _control.Stop(_control.PowerLost ? StopReason.PowerLoss : StopReason.NeedRecovery);
        }
        catch (Exception e)
        {
            _stats.Failures.Enqueue($"thread {_thread}: unexpected {e.GetType().Name} (not a typed KvException/IOException): {e}");
            _control.Stop(StopReason.Failure);
        }
        finally
        {
            ReleaseSnapshots(db, verify: false);
        }
    }

    // One operation; false when it failed in a way that ends this run (its keys stay pending).
    private bool Step(KvDb db)
    {
        if (_flags.FlushOneIn > 0 && _rng.Next(_flags.FlushOneIn) == 0)
        {
            if (_families.Length > 1 && _rng.Next(2) == 0)
            {
                db.Flush(_families[_rng.Next(_families.Length)]); // one family: nothing becomes durable for the others
            }
            else
            {
                long start = _tracker?.Tick() ?? 0;
                db.Flush();
                _tracker?.MarkDurableBefore(start);
            }
            _stats.Add(StressCounter.Flush);
        }
        if (_flags.CompactRangeOneIn > 0 && _rng.Next(_flags.CompactRangeOneIn) == 0)
        {
            CompactRange(db);
        }
        if (_flags.AcquireSnapshotOneIn > 0 && _rng.Next(_flags.AcquireSnapshotOneIn) == 0)
        {
            SnapshotOp(db);
        }
        if (_flags.VerifyDbOneIn > 0 && _rng.Next(_flags.VerifyDbOneIn) == 0)
        {
            RangeChecks.Scan(db, _families, null, _lo, _hi, RangeChecks.Capture(_state, _lo, _hi), _flags.ValueSizeMult, $"thread {_thread} stripe check");
            _stats.Add(StressCounter.StripeVerify);
        }
        if (_flags.CheckpointOneIn > 0 && _rng.Next(_flags.CheckpointOneIn) == 0)
        {
            CheckpointOp(db);
        }
        int r = _rng.Next(100);
        if ((r -= _flags.ReadPercent) < 0)
        {
            GetOp(db);
            return true;
        }
        if ((r -= _flags.PrefixPercent) < 0)
        {
            PrefixOp(db);
            return true;
        }
        if ((r -= _flags.WritePercent) < 0)
        {
            return _flags.WriteBatchOneIn > 0 && _rng.Next(_flags.WriteBatchOneIn) == 0 ? BatchOp(db) : SingleWrite(db, put: true);
        }
        if ((r -= _flags.DelPercent) < 0)
        {
            return SingleWrite(db, put: false);
        }
        if ((r -= _flags.DelRangePercent) < 0)
        {
            return DeleteRangeOp(db);
        }
        int steps = RangeChecks.RandomWalk(db, _families, RangeChecks.Capture(_state, _lo, _hi), _lo, _hi, _rng, _flags.ValueSizeMult);
        _stats.Add(StressCounter.Iterate);
        _stats.Add(StressCounter.IteratorSteps, steps);
        return true;
    }

    private void GetOp(KvDb db)
    {
        long key = _rng.NextInt64(_flags.MaxKey);
        ExpectedValue c0 = _state.Committed(key), p0 = _state.PendingSlot(key);
        byte[]? v = db.Get(Family(key), StressKeys.Key(key));
        ExpectedValue c1 = _state.Committed(key), p1 = _state.PendingSlot(key);
        if (c0 != c1 || p0 != p1)
        {
            _stats.Add(StressCounter.GetSkippedConcurrent); // a write to it overlapped the read
            return;
        }
        if (!c0.Matches(v, key, _flags.ValueSizeMult) && !(p0.Pending && p0.Settled.Matches(v, key, _flags.ValueSizeMult)))
        {
            throw new VerificationException($"Get(key {key}) returned {StressKeys.Describe(key, v, _flags.ValueSizeMult)}, expected {c0}" + (p0.Pending ? $" or {p0}" : ""));
        }
        _stats.Add(StressCounter.Get);
    }

    // -prefixpercent: the keys sharing the first 7 bytes (256 keys) within this stripe, scanned with bounds.
    private void PrefixOp(KvDb db)
    {
        long key = _lo + _rng.NextInt64(_hi - _lo);
        long lo = Math.Max(_lo, key & ~0xFFL), hi = Math.Min(_hi, (key | 0xFF) + 1);
        RangeChecks.Scan(db, _families, null, lo, hi, RangeChecks.Capture(_state, lo, hi), _flags.ValueSizeMult, $"thread {_thread} prefix scan");
        _stats.Add(StressCounter.PrefixScan);
    }

    private bool SingleWrite(KvDb db, bool put)
    {
        long key = _lo + _rng.NextInt64(_hi - _lo);
        Prepare(key, put);
        return Execute(db, put ? StressCounter.Put : StressCounter.Delete, 0, 0);
    }

    private bool BatchOp(KvDb db)
    {
        int n = (int)Math.Min(_hi - _lo, 2 + _rng.Next(7));
        _keys.Clear();
        _values.Clear();
        while (_keys.Count < n)
        {
            long key = _lo + _rng.NextInt64(_hi - _lo);
            if (!_keys.Contains(key))
            {
                _keys.Add(key);
                _values.Add(_state.Next(key, exists: _rng.Next(4) != 0));
            }
        }
        return Execute(db, StressCounter.WriteBatch, 0, 0);
    }

    private bool DeleteRangeOp(KvDb db)
    {
        long begin = _lo + _rng.NextInt64(_hi - _lo);
        long end = Math.Min(_hi, begin + 1 + _rng.Next(_flags.RangeDeletionWidth));
        _keys.Clear();
        _values.Clear();
        for (long k = begin; k < end; k++)
        {
            if (StressFamilies.Of(k, _families.Length) != StressFamilies.Of(begin, _families.Length))
            {
                continue; // the range is deleted in begin's family only
            }
            _keys.Add(k);
            _values.Add(_state.Next(k, exists: false));
        }
        return Execute(db, StressCounter.DeleteRange, begin, end);
    }

    private void Prepare(long key, bool put)
    {
        _keys.Clear();
        _values.Clear();
        _keys.Add(key);
        _values.Add(_state.Next(key, put));
    }

    // Pending markers and history records (unacknowledged), the database call, then commit and
    // acknowledgement. False when the write failed (its records stay unacknowledged).
    private bool Execute(KvDb db, StressCounter kind, long rangeBegin, long rangeEnd)
    {
        bool sync = _flags.Sync || (_flags.SyncOneIn > 0 && _rng.Next(_flags.SyncOneIn) == 0);
        long start = _tracker?.Tick() ?? 0;
        long opId = _tracker?.NextOpId() ?? 0;
        var slots = new long[_keys.Count];
        for (int i = 0; i < _keys.Count; i++)
        {
            ExpectedValue initial = _state.Committed(_keys[i]);
            _state.BeginWrite(_keys[i], _values[i]);
            slots[i] = _tracker?.Record(_thread, _keys[i], initial, new HistoryEntry(_values[i], start, long.MaxValue, opId, false), _keys.Count > 1) ?? -1;
        }
        try
        {
            WriteToDb(db, kind, sync, rangeBegin, rangeEnd);
        }
        catch (Exception e) when (IsTolerated(e))
        {
            _stats.Add(StressCounter.WriteFailures);
            _control.Stop(_control.PowerLost ? StopReason.PowerLoss : StopReason.NeedRecovery);
            return false;
        }
        long ack = _tracker?.Tick() ?? 0;
        for (int i = 0; i < _keys.Count; i++)
        {
            _tracker?.Acknowledge(_thread, _keys[i], slots[i], ack, sync);
            _state.CommitWrite(_keys[i], _values[i]);
        }
        if (sync)
        {
            _tracker?.MarkDurableBefore(start);
        }
        _stats.Add(kind);
        return true;
    }

    private void WriteToDb(KvDb db, StressCounter kind, bool sync, long rangeBegin, long rangeEnd)
    {
        var wo = new WriteOptions { Sync = sync };
        switch (kind)
        {
            case StressCounter.Put when _flags.UseMerge:
                db.Merge(Family(_keys[0]), StressKeys.Key(_keys[0]), StressKeys.Value(_keys[0], _values[0].Base, _flags.ValueSizeMult), wo);
                _stats.Add(StressCounter.Merge);
                break;
            case StressCounter.Put:
                db.Put(Family(_keys[0]), StressKeys.Key(_keys[0]), StressKeys.Value(_keys[0], _values[0].Base, _flags.ValueSizeMult), wo);
                break;
            case StressCounter.Delete:
                db.Delete(Family(_keys[0]), StressKeys.Key(_keys[0]), wo);
                break;
            case StressCounter.DeleteRange:
                db.DeleteRange(Family(rangeBegin), StressKeys.Key(rangeBegin), StressKeys.Key(rangeEnd), wo);
                break;
            default:
                using (var batch = new WriteBatch())
                {
                    for (int i = 0; i < _keys.Count; i++)
                    {
                        if (_values[i].Exists && _flags.UseMerge)
                        {
                            batch.Merge(Family(_keys[i]), StressKeys.Key(_keys[i]), StressKeys.Value(_keys[i], _values[i].Base, _flags.ValueSizeMult));
                            _stats.Add(StressCounter.Merge);
                        }
                        else if (_values[i].Exists)
                        {
                            batch.Put(Family(_keys[i]), StressKeys.Key(_keys[i]), StressKeys.Value(_keys[i], _values[i].Base, _flags.ValueSizeMult));
                        }
                        else
                        {
                            batch.Delete(Family(_keys[i]), StressKeys.Key(_keys[i]));
                        }
                    }
                    db.Write(batch, wo);
                }
                break;
        }
    }

    private void CompactRange(KvDb db)
    {
        ColumnFamilyHandle family = _families[_rng.Next(_families.Length)];
        if (_rng.Next(4) == 0)
        {
            db.CompactRange(family, null, null);
        }
        else
        {
            long a = _rng.NextInt64(_flags.MaxKey), b = Math.Min(_flags.MaxKey, a + 1 + _rng.NextInt64(_flags.MaxKey / 4 + 1));
            db.CompactRange(family, StressKeys.Key(a), StressKeys.Key(b));
        }
        _stats.Add(StressCounter.CompactRange);
    }

    // Take a snapshot of a window of this stripe, or verify and release the oldest one.
    private void SnapshotOp(KvDb db)
    {
        if (_snapshots.Count >= MaxSnapshots || (_snapshots.Count > 0 && _rng.Next(3) == 0))
        {
            SnapshotRecord s = _snapshots[0];
            _snapshots.RemoveAt(0);
            VerifySnapshot(db, s);
            s.Snapshot.Dispose();
            return;
        }
        long lo = _lo + _rng.NextInt64(_hi - _lo), hi = Math.Min(_hi, lo + SnapshotWidth);
        _snapshots.Add(new SnapshotRecord(db.GetSnapshot(), lo, hi, RangeChecks.Capture(_state, lo, hi)));
        _stats.Add(StressCounter.SnapshotTaken);
    }

    private void VerifySnapshot(KvDb db, SnapshotRecord s)
    {
        string what = $"thread {_thread} snapshot at sequence {s.Snapshot.Sequence}";
        var ro = new ReadOptions { Snapshot = s.Snapshot };
        for (long k = s.Lower; k < s.Upper; k += 1 + _rng.Next(8))
        {
            byte[]? v = db.Get(Family(k), StressKeys.Key(k), ro);
            if (!s.Values[k - s.Lower].Matches(v, k, _flags.ValueSizeMult))
            {
                throw new VerificationException($"{what}: Get(key {k}) returned {StressKeys.Describe(k, v, _flags.ValueSizeMult)}, expected {s.Values[k - s.Lower]}");
            }
        }
        RangeChecks.Scan(db, _families, s.Snapshot, s.Lower, s.Upper, s.Values, _flags.ValueSizeMult, what);
        _stats.Add(StressCounter.SnapshotVerified);
    }

    private void ReleaseSnapshots(KvDb db, bool verify)
    {
        foreach (SnapshotRecord s in _snapshots)
        {
            if (verify)
            {
                VerifySnapshot(db, s);
            }
            s.Snapshot.Dispose();
        }
        _snapshots.Clear();
    }

    private ColumnFamilyHandle Family(long key) => _families[StressFamilies.Of(key, _families.Length)];

    // Typed errors are expected when faults are injected or after the power was cut.
    /// <summary>
    /// db_stress's TestCheckpoint: a checkpoint taken while the other workers write (flushed, or
    /// with its WALs copied), opened read-only; the worker's own stripe, which no one else writes,
    /// must hold exactly the committed state. The checkpoint is then removed.
    /// </summary>
    private void CheckpointOp(KvDb db)
    {
        Func<KvOptions> options = CheckpointOptions ?? throw new InvalidOperationException("-checkpoint_one_in needs CheckpointOptions");
        Storage.IFileSystem fs = options().FileSystem;
        string dir = $"{db.Path}.checkpoint-{_thread}";
        RemoveDirectory(fs, dir); // left by a killed predecessor
        ExpectedValue[] expected = RangeChecks.Capture(_state, _lo, _hi);
        db.CreateCheckpoint(dir, _rng.Next(2) == 0 ? 0 : ulong.MaxValue);
        using (KvDb checkpoint = StressFamilies.OpenReadOnly(dir, options, _flags.ColumnFamilies))
        {
            RangeChecks.Scan(checkpoint, StressFamilies.Handles(checkpoint, _flags.ColumnFamilies), null, _lo, _hi, expected,
                _flags.ValueSizeMult, $"thread {_thread} checkpoint");
        }
        RemoveDirectory(fs, dir);
        _stats.Add(StressCounter.Checkpoint);
    }

    private static void RemoveDirectory(Storage.IFileSystem fs, string dir)
    {
        if (!fs.DirectoryExists(dir))
        {
            return;
        }
        foreach (string name in fs.GetChildren(dir))
        {
            fs.DeleteFile(Path.Combine(dir, name));
        }
        fs.DeleteDirectory(dir);
    }

    private bool IsTolerated(Exception e) =>
        (_flags.FaultInjection || _control.PowerLost) && e is KvException or IOException;
}
