using System.Globalization;

namespace KvEngine.CrashTest;

/// <summary>
/// kvcrashtest's command line (db_crashtest.py's: --cycles/--duration, a mode, and kvstress flags
/// passed through after <c>--</c>). Immutable after <see cref="Parse"/>.
/// </summary>
internal sealed class CrashTestFlags
{
    public int Cycles { get; private set; } = 10;
    public int DurationSeconds { get; private set; }
    public CrashMode Mode { get; private set; } = CrashMode.Kill;
    public long Seed { get; private set; } = 2026;
    public string Db { get; private set; } = "";
    public string KvStress { get; private set; } = "";
    public int MinKillMs { get; private set; } = 200;
    public int MaxKillMs { get; private set; } = 2_000;
    public int Threads { get; private set; } = 4;
    public long MaxKey { get; private set; } = 20_000;
    /// <summary>--column-families: kvstress's -column_families (db_crashtest.py's column_families).</summary>
    public int ColumnFamilies { get; private set; } = 1;
    public int OpsPerCycle { get; private set; } = 2_000;
    /// <summary>--mmap-wal 0|1 (--power-cut): kvstress's -mmap_wal, KvOptions.MemoryMappedWal.</summary>
    public bool MemoryMappedWal { get; private set; } = true;
    /// <summary>--direct-io 0|1 (--kill): kvstress's -use_direct_io_for_flush_and_compaction and -use_direct_reads.</summary>
    public bool DirectIO { get; private set; }
    /// <summary>--cut-in-open-one-in N (--power-cut): one cycle in N cuts at a random time from kvstress's start (0: never).</summary>
    public int CutInOpenOneIn { get; private set; } = 8;
    /// <summary>--lie-fsync SUFFIX (--power-cut): the fsync of files whose name ends so does nothing (a lying disk; must be caught).</summary>
    public string? LieFsyncSuffix { get; private set; }
    /// <summary>--keep-unsynced-one-in N (--power-cut): each unsynced data page survives a cut with probability 1/N (0: none does).</summary>
    public int KeepUnsyncedOneIn { get; private set; }
    public IReadOnlyList<string> StressArgs { get; private set; } = Array.Empty<string>();

    public static CrashTestFlags Parse(IReadOnlyList<string> args)
    {
        var f = new CrashTestFlags();
        for (int i = 0; i < args.Count; i++)
        {
            string a = args[i];
            if (a == "--")
            {
                f.StressArgs = args.Skip(i + 1).ToArray();
                break;
            }
            string name = a.TrimStart('-');
            string? value = null;
            int eq = name.IndexOf('=', StringComparison.Ordinal);
            if (eq >= 0)
            {
                value = name[(eq + 1)..];
                name = name[..eq];
            }
            switch (name)
            {
                case "power-loss": f.Mode = CrashMode.PowerLoss; continue;
                case "faults": f.Mode = CrashMode.Faults; continue;
                case "kill": f.Mode = CrashMode.Kill; continue;
                case "power-cut": f.Mode = CrashMode.PowerCut; continue;
                default: break;
            }
            if (value == null)
            {
                if (i + 1 >= args.Count)
                {
                    throw new ArgumentException($"--{name} needs a value");
                }
                value = args[++i];
            }
            switch (name)
            {
                case "cycles": f.Cycles = Int(name, value, 1); break;
                case "duration": f.DurationSeconds = Int(name, value, 1); break;
                case "seed": f.Seed = Int(name, value, 0); break;
                case "db": f.Db = value; break;
                case "kvstress": f.KvStress = value; break;
                case "min-kill-ms": f.MinKillMs = Int(name, value, 0); break;
                case "max-kill-ms": f.MaxKillMs = Int(name, value, 1); break;
                case "threads": f.Threads = Int(name, value, 1); break;
                case "max-key": f.MaxKey = Int(name, value, 1); break;
                case "column-families": f.ColumnFamilies = Int(name, value, 1); break;
                case "ops": f.OpsPerCycle = Int(name, value, 1); break;
                case "mmap-wal": f.MemoryMappedWal = Int(name, value, 0) != 0; break;
                case "direct-io": f.DirectIO = Int(name, value, 0) != 0; break;
                case "cut-in-open-one-in": f.CutInOpenOneIn = Int(name, value, 0); break;
                case "lie-fsync": f.LieFsyncSuffix = value; break;
                case "keep-unsynced-one-in": f.KeepUnsyncedOneIn = Int(name, value, 0); break;
                default: throw new ArgumentException($"unknown option --{name}");
            }
        }
        if (f.MaxKillMs < f.MinKillMs)
        {
            throw new ArgumentException("--max-kill-ms must be at least --min-kill-ms");
        }
        return f;
    }

    private static int Int(string name, string v, int min) =>
        int.TryParse(v, NumberStyles.Integer, CultureInfo.InvariantCulture, out int x) && x >= min
            ? x
            : throw new ArgumentException($"--{name} {v}: expected an integer >= {min}");
}
