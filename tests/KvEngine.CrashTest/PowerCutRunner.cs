using System.Diagnostics;
using System.Globalization;
using System.Text.RegularExpressions;

namespace KvEngine.CrashTest;

/// <summary>
/// kvcrashtest --power-cut: power cuts through a real kernel file system. Each cycle mounts
/// powercutfs (<see cref="PowerCutFs"/>) on the state the previous cut left, runs kvstress in it
/// with its expected state and durability journal outside the mount (-durability_journal: its
/// opening verification checks the previous cut against kvstress's durability model, then it
/// writes), and at a random moment cuts the power: freeze the file system (every request fails
/// from then on, so neither the dying process nor the kernel's late writeback of dirty pages can
/// make anything durable), SIGKILL kvstress, unmount (the daemon saves only what fsync and
/// directory fsync made durable), and go on. About one cycle in <c>--cut-in-open-one-in</c> cuts
/// at a random time from kvstress's start instead, which may fall in the recovery and its
/// verification. A final mount runs kvstress -verify_only. Not thread-safe; one per process.
/// </summary>
internal sealed partial class PowerCutRunner
{
    private static readonly TimeSpan s_startTimeout = TimeSpan.FromMinutes(5);

    private readonly CrashTestFlags _flags;
    private readonly TextWriter _out;
    private readonly Random _rng;
    private readonly Stopwatch _clock = Stopwatch.StartNew();
    private long _cycles, _cutsInOpen, _operations, _keysVerified, _pendingResolved, _writesRecorded, _acknowledged, _synced;
    private long _unsyncedLost, _unsyncedSurvived, _mappedWalCycles, _fsyncs, _dirFsyncs, _pagesKept, _refused, _losses;

    public PowerCutRunner(CrashTestFlags flags, TextWriter output)
    {
        _flags = flags;
        _out = output;
        _rng = new Random((int)flags.Seed);
    }

    /// <summary>Runs the cycles; 0 when nothing was lost, 1 otherwise.</summary>
    public int Run(string kvstress)
    {
        string root = _flags.Db.Length > 0 ? Path.GetFullPath(_flags.Db) : Directory.CreateTempSubdirectory("kvcrashtest-powercut-").FullName;
        Directory.CreateDirectory(root);
        string mnt = Path.Combine(root, "mnt"), image = Path.Combine(root, "image"), next = Path.Combine(root, "image.next");
        string expected = Path.Combine(root, "expected");
        string binary = PowerCutFs.Build(root);
        DeleteDirectory(image);
        DeleteDirectory(next);
        for (long cycle = 0; More(cycle) && _losses == 0; cycle++)
        {
            long losses = _losses;
            using (PowerCutFs fs = PowerCutFs.Mount(binary, mnt, cycle == 0 ? null : image, next, _flags.LieFsyncSuffix, _flags.KeepUnsyncedOneIn, _flags.Seed + cycle))
            {
                RunCycle(fs, kvstress, expected, cycle);
                fs.Unmount();
                Match refused = RefusedLine().Match(fs.Log);
                _refused += refused.Success ? long.Parse(refused.Groups[1].Value, CultureInfo.InvariantCulture) : 0;
            }
            if (_losses != losses)
            {
                // Keep what the failing run opened (image) and what it left (image.after-failure).
                DeleteDirectory(image + ".after-failure");
                Directory.Move(next, image + ".after-failure");
                break;
            }
            DeleteDirectory(image);
            Directory.Move(next, image);
            if (_cycles % 50 == 0)
            {
                Progress();
            }
        }
        if (_losses == 0)
        {
            using PowerCutFs fs = PowerCutFs.Mount(binary, mnt, image, next, null);
            using var child = new StressChild(kvstress, StressArgs(fs.MountPoint, expected, _cycles, verifyOnly: true));
            long ops = 0;
            while (child.TryReadLine(Timeout.InfiniteTimeSpan, out string? line) && line != null)
            {
                Observe(line, ref ops);
            }
            child.WaitForExit();
            fs.Unmount();
            if (child.ExitCode != 0)
            {
                _losses++;
                _out.WriteLine($"kvcrashtest: the final -verify_only run exited with code {child.ExitCode}");
            }
        }
        _out.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"kvcrashtest: mode PowerCut (FUSE), mmap WAL {(_flags.MemoryMappedWal ? "on" : "off")}, unsynced pages kept one in {_flags.KeepUnsyncedOneIn} ({_pagesKept} kept), column families {_flags.ColumnFamilies}, cycles {_cycles} ({_cutsInOpen} cut in open/verification), " +
            $"operations run {_operations}, writes recorded {_writesRecorded} (acknowledged {_acknowledged}, synced {_synced}), keys verified {_keysVerified}, " +
            $"pending resolved {_pendingResolved}, unsynced writes lost (allowed) {_unsyncedLost}, survived {_unsyncedSurvived}, " +
            $"cycles with a mapped WAL seen {_mappedWalCycles}, fsyncs {_fsyncs}, directory fsyncs {_dirFsyncs}, requests refused after the cuts {_refused}, losses found {_losses}, {_clock.Elapsed.TotalSeconds:F0} s"));
        _out.WriteLine(_losses == 0 ? "kvcrashtest: PASSED" : $"kvcrashtest: FAILED (the durable state the failing run opened is kept in {image})");
        if (_flags.Db.Length == 0 && _losses == 0)
        {
            DeleteDirectory(root);
        }
        return _losses == 0 ? 0 : 1;
    }

    private bool More(long done) =>
        _flags.DurationSeconds > 0 ? _clock.Elapsed.TotalSeconds < _flags.DurationSeconds : done < _flags.Cycles;

    private void RunCycle(PowerCutFs fs, string kvstress, string expected, long cycle)
    {
        var args = StressArgs(fs.MountPoint, expected, cycle, verifyOnly: false);
        bool inOpen = cycle > 0 && _flags.CutInOpenOneIn > 0 && _rng.Next(_flags.CutInOpenOneIn) == 0;
        int delayMs = inOpen ? _rng.Next(_flags.MaxKillMs + 1) : _flags.MinKillMs + _rng.Next(_flags.MaxKillMs - _flags.MinKillMs + 1);
        using var child = new StressChild(kvstress, args);
        long ops = 0;
        var started = Stopwatch.StartNew();
        Stopwatch? running = inOpen ? started : null;
        bool exited = false;
        while (true)
        {
            TimeSpan left = running == null ? s_startTimeout - started.Elapsed : TimeSpan.FromMilliseconds(delayMs) - running.Elapsed;
            if (left <= TimeSpan.Zero)
            {
                if (running == null)
                {
                    throw new TimeoutException($"kvstress did not start within {s_startTimeout}");
                }
                break;
            }
            if (!child.TryReadLine(left, out string? line))
            {
                continue;
            }
            if (line == null)
            {
                exited = true;
                break;
            }
            Observe(line, ref ops);
            if (line == "kvstress: running" && running == null)
            {
                running = Stopwatch.StartNew();
            }
        }
        if (exited)
        {
            // It ended before the cut: only a failure ends it (its operations are unbounded).
            child.WaitForExit();
            _losses++;
            _out.WriteLine($"kvcrashtest: cycle {cycle}: kvstress exited with code {child.ExitCode} before the cut");
            return;
        }
        if (MappedWal(child.ProcessId, fs.MountPoint))
        {
            _mappedWalCycles++;
        }
        string counters = fs.Cut();
        child.Kill(); // after the cut nothing it does reaches the durable state; its last lines are ignored
        _cycles++;
        _cutsInOpen += inOpen ? 1 : 0;
        _operations += ops;
        Match m = CutLine().Match(counters);
        if (m.Success)
        {
            _fsyncs += long.Parse(m.Groups[1].Value, CultureInfo.InvariantCulture);
            _dirFsyncs += long.Parse(m.Groups[2].Value, CultureInfo.InvariantCulture);
            _pagesKept += long.Parse(m.Groups[3].Value, CultureInfo.InvariantCulture);
        }
    }

    // Whether the process maps a .log file of the mount (the memory-mapped write-ahead log).
    private static bool MappedWal(int pid, string mountPoint)
    {
        try
        {
            string prefix = Path.GetFullPath(mountPoint) + "/";
            return File.ReadLines($"/proc/{pid}/maps").Any(l => l.Contains(prefix, StringComparison.Ordinal) && l.EndsWith(".log", StringComparison.Ordinal));
        }
        catch (IOException)
        {
            return false; // it exited meanwhile
        }
    }

    private List<string> StressArgs(string mountPoint, string expected, long cycle, bool verifyOnly)
    {
        var args = new List<string>
        {
            "-db=" + Path.Combine(mountPoint, "db"), "-expected_values_dir=" + expected, "-durability_journal=1",
            "-destroy_db_initially=" + (cycle == 0 ? "1" : "0"),
            "-reopen=0", "-progress_ms=100", "-ops_per_thread=1000000000",
            "-mmap_wal=" + (_flags.MemoryMappedWal ? "1" : "0"),
            "-sync_one_in=10", "-write_buffer_size=65536", "-flush_one_in=500", "-compact_range_one_in=2000",
            string.Create(CultureInfo.InvariantCulture, $"-seed={_flags.Seed + cycle}"),
            string.Create(CultureInfo.InvariantCulture, $"-threads={_flags.Threads}"),
            string.Create(CultureInfo.InvariantCulture, $"-max_key={_flags.MaxKey}"),
            string.Create(CultureInfo.InvariantCulture, $"-column_families={_flags.ColumnFamilies}"),
        };
        if (verifyOnly)
        {
            args.Add("-verify_only=1");
        }
        args.AddRange(_flags.StressArgs);
        return args;
    }

    private void Observe(string line, ref long ops)
    {
        Match m;
        if ((m = CrashTestRunner.ProgressLine().Match(line)).Success)
        {
            ops = long.Parse(m.Groups[1].Value, CultureInfo.InvariantCulture);
        }
        else if ((m = CrashTestRunner.VerifiedLine().Match(line)).Success)
        {
            _keysVerified += long.Parse(m.Groups[1].Value, CultureInfo.InvariantCulture);
            _pendingResolved += long.Parse(m.Groups[2].Value, CultureInfo.InvariantCulture);
        }
        else if ((m = JournalLine().Match(line)).Success)
        {
            _writesRecorded += long.Parse(m.Groups[1].Value, CultureInfo.InvariantCulture);
            _acknowledged += long.Parse(m.Groups[2].Value, CultureInfo.InvariantCulture);
            _synced += long.Parse(m.Groups[3].Value, CultureInfo.InvariantCulture);
        }
        else if ((m = UnsyncedLine().Match(line)).Success)
        {
            _unsyncedLost += long.Parse(m.Groups[1].Value, CultureInfo.InvariantCulture);
            _unsyncedSurvived += long.Parse(m.Groups[2].Value, CultureInfo.InvariantCulture);
        }
        else if (CrashTestRunner.IsFailureLine(line))
        {
            _out.WriteLine(line);
        }
    }

    private void Progress() => _out.WriteLine(string.Create(CultureInfo.InvariantCulture,
        $"kvcrashtest: {_cycles} power cuts, {_operations} operations, {_acknowledged} writes acknowledged, {_unsyncedLost} unsynced lost, {_clock.Elapsed.TotalSeconds:F0} s"));

    private static void DeleteDirectory(string dir)
    {
        if (Directory.Exists(dir))
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [GeneratedRegex(@"^kvstress: durability journal: (\d+) writes recorded, (\d+) acknowledged, (\d+) synced$")]
    private static partial Regex JournalLine();

    [GeneratedRegex(@"^kvstress: unsynced writes after the power cut: (\d+) lost, (\d+) survived$")]
    private static partial Regex UnsyncedLine();

    [GeneratedRegex(@"requests refused after the cut: (\d+)")]
    private static partial Regex RefusedLine();

    [GeneratedRegex(@"fsyncs (\d+) fsyncdirs (\d+) .*unsynced_pages_kept (\d+)")]
    private static partial Regex CutLine();
}
