using System.Diagnostics;
using System.Globalization;
using KvEngine.Memory;

namespace KvEngine.DbBench;

/// <summary>
/// Prints where the process's memory went after a run: peak and current resident set (the
/// operating system's view), the managed heap (GC), and the engine's native memory (for KvEngine
/// its native allocator: bytes live in blocks, and bytes its slabs and large blocks hold from the
/// system, a high-water mark for slab classes; for RocksDB its memtables, table readers and block
/// cache). The rest of the resident set is the runtime, code, and glibc's heap. Stateless.
/// </summary>
internal static class MemoryReport
{
    private const double Mb = 1 << 20;

    /// <summary>KvEngine's native allocator, as the Memory line reports it.</summary>
    public static string NativeAllocatorUsage()
    {
        MemoryUsage native = NativeAllocator.Shared.GetUsage();
        return string.Create(CultureInfo.InvariantCulture,
            $"native allocator live {native.AllocatedBytes / Mb:F1} MB in {native.LiveAllocations} blocks, resident {native.ResidentBytes / Mb:F1} MB");
    }

    /// <param name="output">Where the lines go.</param>
    /// <param name="engineNative">The engine's native memory, appended to the Memory line.</param>
    public static void Print(TextWriter output, string engineNative)
    {
        using Process self = Process.GetCurrentProcess();
        GCMemoryInfo gc = GC.GetGCMemoryInfo();
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"Memory: peak RSS {self.PeakWorkingSet64 / Mb:F1} MB, RSS {self.WorkingSet64 / Mb:F1} MB, GC heap {gc.HeapSizeBytes / Mb:F1} MB (committed {gc.TotalCommittedBytes / Mb:F1} MB), {engineNative}"));
        ReadOnlySpan<GCGenerationInfo> gens = gc.GenerationInfo;
        string[] names = ["gen0", "gen1", "gen2", "LOH", "POH"];
        var line = new System.Text.StringBuilder("GC after last collection (#").Append(gc.Index).Append("):");
        for (int i = 0; i < gens.Length && i < names.Length; i++)
        {
            line.Append(CultureInfo.InvariantCulture, $" {names[i]} {gens[i].SizeAfterBytes / Mb:F1} MB");
        }
        output.WriteLine(line.ToString());
    }
}
