using System.Diagnostics;
using System.Globalization;
using System.Text.RegularExpressions;

namespace KvEngine.CrashTest;

/// <summary>
/// The crash-test loop. Kill mode: start kvstress on disk (its first act is to verify the database
/// against the expected state a killed predecessor left), let it run for a random time, SIGKILL
/// it, repeat; finish with a -verify_only run. Power-loss and fault modes: run kvstress's
/// in-process cycles in chunks. Counts cycles, operations run, keys verified and losses (any
/// verification failure). Not thread-safe; one per process.
/// </summary>
internal sealed partial class CrashTestRunner
{
    private const int PowerLossChunk = 100;
    private static readonly TimeSpan s_startTimeout = TimeSpan.FromMinutes(5);

    private readonly CrashTestFlags _flags;
    private readonly TextWriter _out;
    private readonly Random _rng;
    private readonly Stopwatch _clock = Stopwatch.StartNew();
    private long _cycles;
    private long _operations;
    private long _keysVerified;
    private long _pendingResolved;
    private long _unsyncedLost;
    private long _losses;

    public CrashTestRunner(CrashTestFlags flags, TextWriter output)
    {
        _flags = flags;
        _out = output;
        _rng = new Random((int)flags.Seed);
    }

    /// <summary>Runs the test; 0 when no loss was found, 1 otherwise.</summary>
    public int Run()
    {
        string kvstress = _flags.KvStress.Length > 0 ? _flags.KvStress : Path.Combine(AppContext.BaseDirectory, "kvstress.dll");
        if (!File.Exists(kvstress))
        {
            throw new ArgumentException($"kvstress not found at {kvstress} (use --kvstress PATH)");
        }
        if (_flags.Mode == CrashMode.PowerCut)
        {
            return new PowerCutRunner(_flags, _out).Run(kvstress);
        }
        if (_flags.Mode == CrashMode.Kill)
        {
            RunKillCycles(kvstress);
        }
        else
        {
            RunInProcessCycles(kvstress);
        }
        _out.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"kvcrashtest: mode {_flags.Mode}, column families {_flags.ColumnFamilies}, cycles {_cycles}, operations run {_operations}, keys verified {_keysVerified}, " +
            $"pending resolved {_pendingResolved}, unsynced writes lost (allowed) {_unsyncedLost}, losses found {_losses}, direct I/O {(_flags.DirectIO ? "on" : "off")}, {_clock.Elapsed.TotalSeconds:F0} s"));
        _out.WriteLine(_losses == 0 ? "kvcrashtest: PASSED" : "kvcrashtest: FAILED");
        return _losses == 0 ? 0 : 1;
    }

    private bool More(long done) =>
        _flags.DurationSeconds > 0 ? _clock.Elapsed.TotalSeconds < _flags.DurationSeconds : done < _flags.Cycles;

    private void RunKillCycles(string kvstress)
    {
        string root = _flags.Db.Length > 0 ? _flags.Db : Directory.CreateTempSubdirectory("kvcrashtest-").FullName;
        string db = Path.Combine(root, "db"), expected = Path.Combine(root, "expected");
        for (long cycle = 0; More(cycle) && _losses == 0; cycle++)
        {
            var args = StressArgs(db, expected, cycle);
            args.Add("-ops_per_thread=1000000000");
            using var child = new StressChild(kvstress, args);
            int killAfter = _flags.MinKillMs + _rng.Next(_flags.MaxKillMs - _flags.MinKillMs + 1);
            bool killed = RunUntilKilled(child, killAfter, out long ops);
            _operations += ops;
            _cycles++;
            if (_cycles % 50 == 0)
            {
                _out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"kvcrashtest: {_cycles} kill cycles, {_operations} operations, {_keysVerified} keys verified, {_pendingResolved} pending resolved, {_clock.Elapsed.TotalSeconds:F0} s"));
            }
            if (!killed && child.ExitCode != 0)
            {
                _losses++;
                _out.WriteLine($"kvcrashtest: cycle {cycle}: kvstress exited with code {child.ExitCode}");
            }
        }
        if (_losses == 0)
        {
            var args = StressArgs(db, expected, _cycles);
            args.Add("-verify_only=1");
            using var child = new StressChild(kvstress, args);
            Drain(child, TimeSpan.MaxValue, out _);
            child.WaitForExit();
            if (child.ExitCode != 0)
            {
                _losses++;
                _out.WriteLine($"kvcrashtest: the final -verify_only run exited with code {child.ExitCode}");
            }
        }
        if (_flags.Db.Length == 0 && _losses == 0)
        {
            Directory.Delete(root, recursive: true);
        }
    }

    private List<string> StressArgs(string db, string expected, long cycle)
    {
        var args = new List<string>
        {
            "-db=" + db, "-expected_values_dir=" + expected,
            "-destroy_db_initially=" + (cycle == 0 ? "1" : "0"),
            "-reopen=0", "-progress_ms=100",
            string.Create(CultureInfo.InvariantCulture, $"-seed={_flags.Seed + cycle}"),
            string.Create(CultureInfo.InvariantCulture, $"-threads={_flags.Threads}"),
            string.Create(CultureInfo.InvariantCulture, $"-max_key={_flags.MaxKey}"),
            string.Create(CultureInfo.InvariantCulture, $"-column_families={_flags.ColumnFamilies}"),
        };
        if (_flags.DirectIO)
        {
            args.Add("-use_direct_io_for_flush_and_compaction=1");
            args.Add("-use_direct_reads=1");
        }
        args.AddRange(_flags.StressArgs);
        return args;
    }

    // Reads output until "running", then for killAfterMs more, then kills. False when it exited by itself.
    private bool RunUntilKilled(StressChild child, int killAfterMs, out long ops)
    {
        ops = 0;
        var started = Stopwatch.StartNew();
        string? line;
        do
        {
            if (!child.TryReadLine(s_startTimeout, out line))
            {
                throw new TimeoutException("kvstress did not start within " + s_startTimeout);
            }
            Observe(line, ref ops);
        }
        while (line != null && line != "kvstress: running");
        if (line == null)
        {
            child.WaitForExit();
            return false;
        }
        if (Drain(child, TimeSpan.FromMilliseconds(killAfterMs), out long more))
        {
            ops = Math.Max(ops, more);
            child.WaitForExit();
            return false;
        }
        child.Kill();
        ops = Math.Max(ops, more);
        Drain(child, TimeSpan.FromSeconds(10), out more);
        ops = Math.Max(ops, more);
        return true;
    }

    // Reads lines for up to 'time'; true when the output ended.
    private bool Drain(StressChild child, TimeSpan time, out long ops)
    {
        ops = 0;
        var sw = Stopwatch.StartNew();
        while (true)
        {
            TimeSpan left = time == TimeSpan.MaxValue ? Timeout.InfiniteTimeSpan : time - sw.Elapsed;
            if (left != Timeout.InfiniteTimeSpan && left <= TimeSpan.Zero)
            {
                return false;
            }
            if (!child.TryReadLine(left, out string? line))
            {
                return false;
            }
            if (line == null)
            {
                return true;
            }
            Observe(line, ref ops);
        }
    }

    private void Observe(string? line, ref long ops)
    {
        if (line == null)
        {
            return;
        }
        Match m;
        if ((m = ProgressLine().Match(line)).Success)
        {
            ops = long.Parse(m.Groups[1].Value, CultureInfo.InvariantCulture);
        }
        else if ((m = VerifiedLine().Match(line)).Success)
        {
            _keysVerified += long.Parse(m.Groups[1].Value, CultureInfo.InvariantCulture);
            _pendingResolved += long.Parse(m.Groups[2].Value, CultureInfo.InvariantCulture);
        }
        else if (IsFailureLine(line))
        {
            _out.WriteLine(line);
        }
    }

    private void RunInProcessCycles(string kvstress)
    {
        long done = 0;
        for (int run = 0; More(done) && _losses == 0; run++)
        {
            long n = _flags.DurationSeconds > 0 ? PowerLossChunk : Math.Min(PowerLossChunk, _flags.Cycles - done);
            var args = new List<string>
            {
                string.Create(CultureInfo.InvariantCulture, $"-power_loss_cycles={n}"),
                string.Create(CultureInfo.InvariantCulture, $"-seed={_flags.Seed + run}"),
                string.Create(CultureInfo.InvariantCulture, $"-threads={_flags.Threads}"),
                string.Create(CultureInfo.InvariantCulture, $"-max_key={_flags.MaxKey}"),
                string.Create(CultureInfo.InvariantCulture, $"-ops_per_thread={_flags.OpsPerCycle}"),
                string.Create(CultureInfo.InvariantCulture, $"-column_families={_flags.ColumnFamilies}"),
                "-sync_one_in=10", "-write_buffer_size=65536", "-flush_one_in=500", "-compact_range_one_in=2000",
            };
            if (_flags.Mode == CrashMode.Faults)
            {
                args.Add("-fault_injection=1");
            }
            args.AddRange(_flags.StressArgs);
            using var child = new StressChild(kvstress, args);
            var summary = new Dictionary<string, long>(StringComparer.Ordinal);
            while (child.TryReadLine(Timeout.InfiniteTimeSpan, out string? line) && line != null)
            {
                Match m = SummaryLine().Match(line);
                if (m.Success)
                {
                    summary[m.Groups[1].Value] = long.Parse(m.Groups[2].Value, CultureInfo.InvariantCulture);
                }
                else if (IsFailureLine(line))
                {
                    _out.WriteLine(line);
                }
            }
            child.WaitForExit();
            long cycles = summary.GetValueOrDefault("PowerLoss");
            done += cycles;
            _cycles += cycles;
            _operations += summary.GetValueOrDefault("Operations");
            _keysVerified += summary.GetValueOrDefault("KeysVerified");
            _unsyncedLost += summary.GetValueOrDefault("UnsyncedWritesLost");
            if (child.ExitCode != 0)
            {
                _losses += Math.Max(1, summary.GetValueOrDefault("VerificationFailures"));
                _out.WriteLine($"kvcrashtest: kvstress exited with code {child.ExitCode}");
            }
            _out.WriteLine(string.Create(CultureInfo.InvariantCulture, $"kvcrashtest: {_cycles} {_flags.Mode} cycles, {_operations} operations, {_clock.Elapsed.TotalSeconds:F0} s"));
        }
    }

    // kvstress's lines that explain a failure; echoed so the crash test's output says what was lost.
    internal static bool IsFailureLine(string line) =>
        line.StartsWith("VERIFICATION FAILURE", StringComparison.Ordinal) || line.StartsWith("kvstress: FAILED", StringComparison.Ordinal)
        || (line.StartsWith("kvstress: ", StringComparison.Ordinal) && line.Contains("error", StringComparison.OrdinalIgnoreCase));

    [GeneratedRegex(@"^progress ops=(\d+)$")]
    internal static partial Regex ProgressLine();

    [GeneratedRegex(@"^kvstress: verified (\d+) keys .*\((\d+) pending resolved\)$")]
    internal static partial Regex VerifiedLine();

    [GeneratedRegex(@"^([A-Za-z]+)\s+(\d+)$")]
    private static partial Regex SummaryLine();
}
