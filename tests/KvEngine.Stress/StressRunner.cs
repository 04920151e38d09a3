using KvEngine.Storage;

namespace KvEngine.Stress;

/// <summary>
/// Runs kvstress: on disk (verify what a previous, possibly killed, run left; then segments of
/// worker operations separated by -reopen close/reopen cycles, each verified), or in process on a
/// <see cref="FaultInjectionFileSystem"/> (-power_loss_cycles: per cycle the power is cut at a
/// random operation while the workers run, then the database is reopened and verified against the
/// durability model; -fault_injection adds random I/O errors, answered by Resume() or a reopen).
/// Not thread-safe: one runner per process; it owns the worker threads it starts.
/// </summary>
internal sealed class StressRunner
{
    private const string InProcessDir = "/kvstress";
    private const int OpenAttempts = 5;
    private const int ResumeAttempts = 3;

    private readonly StressFlags _flags;
    private readonly TextWriter _out;
    private readonly StressStats _stats = new();
    private readonly Random _rng;
    private FaultInjectionFileSystem? _fs;
    private FaultPlan? _plan;

    public StressRunner(StressFlags flags, TextWriter output)
    {
        _flags = flags;
        _out = output;
        _rng = new Random((int)(flags.Seed ^ (flags.Seed >> 32)));
    }

    public StressStats Stats => _stats;

    /// <summary>Runs to completion; 0 when every verification passed, 1 otherwise.</summary>
    public int Run()
    {
        using Timer? progress = _flags.ProgressMs > 0
            ? new Timer(_ => Print($"progress ops={_stats.Operations}"), null, _flags.ProgressMs, _flags.ProgressMs)
            : null;
        try
        {
            if (_flags.InProcessFileSystem)
            {
                RunInProcess();
            }
            else
            {
                RunOnDisk();
            }
        }
        catch (VerificationException e)
        {
            _stats.Failures.Enqueue(e.Message);
        }
        progress?.Dispose();
        Print(_stats.Summary().TrimEnd());
        if (_fs != null)
        {
            Print($"I/O errors injected: {_plan!.Injected}; syncs: {_fs.SyncCount}; directory syncs: {_fs.DirectorySyncCount}");
        }
        foreach (string f in _stats.Failures)
        {
            Print("VERIFICATION FAILURE: " + f);
        }
        Print(_stats.Failures.IsEmpty ? "kvstress: PASSED" : $"kvstress: FAILED ({_stats.Failures.Count} verification failures)");
        return _stats.Failures.IsEmpty ? 0 : 1;
    }

    private void RunOnDisk()
    {
        if (_flags.DestroyDbInitially && Directory.Exists(_flags.Db))
        {
            Directory.Delete(_flags.Db, recursive: true);
        }
        using ExpectedState state = ExpectedState.Open(_flags.ExpectedValuesDir, _flags.MaxKey, _flags.ValueSizeMult, _flags.DestroyDbInitially);
        if (state.Fresh && File.Exists(Path.Combine(_flags.Db, "CURRENT")))
        {
            throw new ArgumentException($"{_flags.Db} holds a database but there is no expected state for it (-expected_values_dir); use -destroy_db_initially=1");
        }
        // With -durability_journal the previous run may have ended in a power cut: the opening
        // verification allows what the journal says may be lost, then the journal starts over.
        using DurabilityTracker? tracker = _flags.DurabilityJournal
            ? DurabilityTracker.Load(DurabilityJournal.Open(_flags.ExpectedValuesDir, _flags.Threads, reset: state.Fresh), _flags.Threads)
            : null;
        var verifier = new DbVerifier(_flags, state, tracker, _stats);
        KvDb db = StressFamilies.Open(_flags.Db, () => Options(LocalFileSystem.Instance), _flags.ColumnFamilies);
        try
        {
            if (!state.Fresh)
            {
                if (tracker != null)
                {
                    (long writes, long acked, long synced) = tracker.Counts();
                    Print($"kvstress: durability journal: {writes} writes recorded, {acked} acknowledged, {synced} synced");
                }
                long lost = _stats[StressCounter.UnsyncedWritesLost], survived = _stats[StressCounter.UnsyncedWritesSurvived];
                Verify(verifier, db, powerLost: tracker != null, "after open");
                if (tracker != null)
                {
                    Print($"kvstress: unsynced writes after the power cut: {_stats[StressCounter.UnsyncedWritesLost] - lost} lost, {_stats[StressCounter.UnsyncedWritesSurvived] - survived} survived");
                    tracker.Reset();
                }
            }
            if (_flags.VerifyOnly)
            {
                return;
            }
            Print("kvstress: running");
            int segments = _flags.Reopen + 1;
            for (int s = 0; s < segments; s++)
            {
                long ops = _flags.OpsPerThread / segments + (s == segments - 1 ? _flags.OpsPerThread % segments : 0);
                var control = new RunControl(long.MaxValue, null);
                RunWorkers(NewWorkers(state, tracker, control, s), db, ops);
                if (control.Reason == StopReason.Failure)
                {
                    return;
                }
                Verify(verifier, db, powerLost: false, $"after segment {s + 1}");
                if (s < segments - 1)
                {
                    db.Close();
                    Close(db);
                    db = StressFamilies.Open(_flags.Db, () => Options(LocalFileSystem.Instance), _flags.ColumnFamilies);
                    _stats.Add(StressCounter.Reopen);
                    Verify(verifier, db, powerLost: false, $"after reopen {s + 1}");
                }
            }
            db.Close();
        }
        finally
        {
            Close(db);
        }
    }

    private void RunInProcess()
    {
        _fs = new FaultInjectionFileSystem();
        _plan = new FaultPlan(_flags.Seed, _flags.ReadFaultOneIn, _flags.WriteFaultOneIn);
        _fs.ShouldFail = _plan.ShouldFail;
        _fs.CreateDirectory(InProcessDir);
        using ExpectedState state = ExpectedState.Open("", _flags.MaxKey, _flags.ValueSizeMult, reset: true);
        var tracker = new DurabilityTracker(_flags.Threads);
        var verifier = new DbVerifier(_flags, state, tracker, _stats);
        KvDb db = OpenInProcess(faults: false);
        try
        {
            for (int cycle = 0; cycle < _flags.PowerLossCycles; cycle++)
            {
                if (!RunCycle(ref db, state, tracker, verifier, cycle))
                {
                    return;
                }
            }
            db.Close();
        }
        finally
        {
            Close(db);
        }
    }

    // One power-loss cycle; false when a verification failed.
    private bool RunCycle(ref KvDb db, ExpectedState state, DurabilityTracker tracker, DbVerifier verifier, int cycle)
    {
        long total = _flags.OpsPerThread * _flags.Threads;
        long cutAt = 1 + _rng.NextInt64(Math.Max(1, total));
        long done = 0;
        bool cut = false;
        // About -reopen clean close/reopen cycles over the run: half the operations, then a clean
        // reopen (verified; nothing acknowledged may be missing), then the rest and the power cut.
        bool reopenPending = _flags.Reopen > 0 && _rng.NextInt64(_flags.PowerLossCycles) < _flags.Reopen;
        _plan!.Enabled = _flags.FaultInjection;
        for (int round = 0; ; round++)
        {
            bool beforeReopen = reopenPending;
            var control = beforeReopen ? new RunControl(long.MaxValue, null) : new RunControl(Math.Max(1, cutAt - done), CutPower);
            StressWorker[] workers = NewWorkers(state, tracker, control, (cycle * 1000) + round);
            RunWorkers(workers, db, (beforeReopen ? _flags.OpsPerThread / 2 : _flags.OpsPerThread) - (done / _flags.Threads));
            done += workers.Sum(w => w.Done);
            if (control.Reason == StopReason.Failure)
            {
                return false;
            }
            if (control.PowerLost)
            {
                cut = true;
                break;
            }
            if (beforeReopen && control.Reason == StopReason.Completed)
            {
                CleanReopen(ref db, verifier, cycle);
                reopenPending = false;
                continue;
            }
            if (control.Reason != StopReason.NeedRecovery || !TryResume(db))
            {
                break;
            }
            _plan.Enabled = false;
            Verify(verifier, db, powerLost: false, $"cycle {cycle} after Resume");
            _plan.Enabled = _flags.FaultInjection;
        }
        if (!cut)
        {
            CutPower();
        }
        Close(db); // the machine is off: nothing it tries to write gets through
        _plan.PoweredOff = false;
        db = OpenInProcess(_flags.FaultInjection);
        _plan.Enabled = false;
        _stats.Add(StressCounter.PowerLoss);
        Verify(verifier, db, powerLost: true, $"cycle {cycle} after power loss at operation {done}");
        tracker.Reset();
        return true;
    }

    private void CleanReopen(ref KvDb db, DbVerifier verifier, int cycle)
    {
        _plan!.Enabled = false;
        try
        {
            db.Close();
        }
        catch (Exception e) when (_flags.FaultInjection && e is KvException or IOException)
        {
            // A background error from an earlier injected fault: Close reports it, releases
            // everything anyway, and the WAL still holds every acknowledged write.
            _stats.Add(StressCounter.InjectedErrorsSeen);
        }
        Close(db);
        db = OpenInProcess(faults: false);
        _stats.Add(StressCounter.Reopen);
        Verify(verifier, db, powerLost: false, $"cycle {cycle} after a clean reopen");
        _plan.Enabled = _flags.FaultInjection;
    }

    private void CutPower()
    {
        _plan!.PoweredOff = true;
        _fs!.SimulatePowerLoss();
    }

    // Resume() after an I/O error (RocksDB's DB::Resume), with faults still injected but the last attempt.
    private bool TryResume(KvDb db)
    {
        for (int attempt = 0; attempt < ResumeAttempts; attempt++)
        {
            _plan!.Enabled = _flags.FaultInjection && attempt < ResumeAttempts - 1;
            try
            {
                db.Resume();
                _stats.Add(StressCounter.Resume);
                return true;
            }
            catch (Exception e) when (e is KvException or IOException)
            {
                _stats.Add(StressCounter.ResumeFailed);
            }
        }
        return false;
    }

    // Open after a power cut; with faults, the first attempts may fail but only with a typed error.
    private KvDb OpenInProcess(bool faults)
    {
        string path = InProcessDir + "/db";
        for (int attempt = 0; ; attempt++)
        {
            _plan!.Enabled = faults && attempt < OpenAttempts - 1;
            try
            {
                return StressFamilies.Open(path, () => Options(_fs!), _flags.ColumnFamilies);
            }
            catch (Exception e) when ((e is KvException or IOException) && _plan.Enabled)
            {
                _stats.Add(StressCounter.OpenFailed);
            }
        }
    }

    /// <summary>Disposes <paramref name="db"/> after adding its engine counts to the run's.</summary>
    private void Close(KvDb db)
    {
        _stats.Add(StressCounter.ReadTriggeredCompactions, db.Counters.ReadTriggeredCompactions);
        db.Dispose();
    }

    private KvOptions Options(IFileSystem fs) => new()
    {
        FileSystem = fs,
        WriteBufferSize = _flags.WriteBufferSize,
        BloomBitsPerKey = _flags.BloomBits,
        Compression = _flags.CompressionType,
        TargetFileSizeBase = Math.Max(64 << 10, _flags.WriteBufferSize),
        MaxBytesForLevelBase = Math.Max(256 << 10, _flags.WriteBufferSize * 4),
        MergeOperator = _flags.UseMerge ? PutMergeOperator.Instance : null,
        MemoryMappedWal = _flags.MemoryMappedWal,
        UseDirectReads = _flags.UseDirectReads,
        UseDirectIoForFlushAndCompaction = _flags.UseDirectIoForFlushAndCompaction,
        CompactionStyle = _flags.CompactionStyle,
    };

    private StressWorker[] NewWorkers(ExpectedState state, DurabilityTracker? tracker, RunControl control, int round)
    {
        var workers = new StressWorker[_flags.Threads];
        for (int t = 0; t < workers.Length; t++)
        {
            int seed = unchecked((int)((_flags.Seed * 1_000_003) + (round * 7_919L) + t)); // deterministic per (seed, round, thread)
            workers[t] = new StressWorker(t, _flags, state, tracker, _stats, control, seed)
            {
                CheckpointOptions = () => Options(_fs ?? (IFileSystem)LocalFileSystem.Instance),
            };
        }
        return workers;
    }

    private static void RunWorkers(StressWorker[] workers, KvDb db, long ops)
    {
        var threads = new Thread[workers.Length];
        for (int t = 0; t < workers.Length; t++)
        {
            StressWorker w = workers[t];
            threads[t] = new Thread(() => w.Run(db, ops)) { Name = $"kvstress-{t}", IsBackground = true };
            threads[t].Start();
        }
        foreach (Thread th in threads)
        {
            th.Join();
        }
    }

    private void Verify(DbVerifier verifier, KvDb db, bool powerLost, string when)
    {
        long pending = _stats[StressCounter.PendingResolved];
        verifier.VerifyAll(db, powerLost, when);
        Print($"kvstress: verified {_flags.MaxKey} keys {when} ({_stats[StressCounter.PendingResolved] - pending} pending resolved)");
    }

    private void Print(string line)
    {
        lock (_out)
        {
            _out.WriteLine(line);
            _out.Flush();
        }
    }
}
