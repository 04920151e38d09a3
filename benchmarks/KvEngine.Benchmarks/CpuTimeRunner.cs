using System.Diagnostics;
using System.Globalization;

namespace KvEngine.Benchmarks;

/// <summary>
/// <c>--cpu-time [seconds] [rounds]</c>: the <see cref="MultiGetBenchmarks"/> methods timed by the
/// process's CPU time instead of the wall clock, in turn, round after round (each MultiGet right
/// after its 32 Gets), with the MultiGet/Gets ratio of each pair per round. On a machine shared with
/// other work a thread that is preempted accrues no CPU time, so these ratios hold where
/// BenchmarkDotNet's wall-clock error bars grow as wide as the means (cache contention from the
/// other work still shows). The database is idle while it runs (no flush or compaction is pending
/// after setup), so the process's CPU time is the benchmark thread's. Single-threaded; allocates
/// freely (the allocation figures come from BenchmarkDotNet's <c>[MemoryDiagnoser]</c>).
/// </summary>
internal static class CpuTimeRunner
{
    public static void Run(string[] args)
    {
        double seconds = args.Length > 0 ? double.Parse(args[0], CultureInfo.InvariantCulture) : 3;
        int rounds = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : 3;
        var bench = new MultiGetBenchmarks();
        bench.GlobalSetup();
        try
        {
            (string Name, Func<int> Op)[] methods =
            [
                (nameof(MultiGetBenchmarks.CachedRandom32Gets), bench.CachedRandom32Gets),
                (nameof(MultiGetBenchmarks.CachedRandomMultiGet32), bench.CachedRandomMultiGet32),
                (nameof(MultiGetBenchmarks.CachedClustered32Gets), bench.CachedClustered32Gets),
                (nameof(MultiGetBenchmarks.CachedClusteredMultiGet32), bench.CachedClusteredMultiGet32),
                (nameof(MultiGetBenchmarks.UncachedRandom32Gets), bench.UncachedRandom32Gets),
                (nameof(MultiGetBenchmarks.UncachedRandomMultiGet32), bench.UncachedRandomMultiGet32),
                (nameof(MultiGetBenchmarks.UncachedClustered32Gets), bench.UncachedClustered32Gets),
                (nameof(MultiGetBenchmarks.UncachedClusteredMultiGet32), bench.UncachedClusteredMultiGet32),
            ];
            foreach ((string _, Func<int> op) in methods)
            {
                CpuNanosPerKey(op, 0.5); // warm-up: JIT tiers, caches
            }
            for (int round = 1; round <= rounds; round++)
            {
                for (int i = 0; i < methods.Length; i += 2)
                {
                    double gets = CpuNanosPerKey(methods[i].Op, seconds);
                    double multiGet = CpuNanosPerKey(methods[i + 1].Op, seconds);
                    Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                        $"round {round}  {methods[i].Name,-24} {gets,8:F1} ns/key CPU   {methods[i + 1].Name,-28} {multiGet,8:F1} ns/key CPU   MultiGet/Gets {multiGet / gets:F2}"));
                }
            }
        }
        finally
        {
            bench.GlobalCleanup();
        }
    }

    // Calls `op` (one invoke = MultiGetBenchmarks.KeysPerInvoke keys) for about `seconds` of wall time; CPU nanoseconds per key.
    private static double CpuNanosPerKey(Func<int> op, double seconds)
    {
        using Process self = Process.GetCurrentProcess();
        var wall = Stopwatch.StartNew();
        self.Refresh();
        TimeSpan cpu0 = self.TotalProcessorTime;
        long keys = 0;
        int sink = 0;
        while (wall.Elapsed.TotalSeconds < seconds)
        {
            sink += op();
            keys += MultiGetBenchmarks.KeysPerInvoke;
        }
        self.Refresh();
        GC.KeepAlive(sink);
        return (self.TotalProcessorTime - cpu0).TotalNanoseconds / keys;
    }
}
