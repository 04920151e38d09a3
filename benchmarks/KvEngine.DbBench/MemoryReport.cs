using System.Diagnostics;
using System.Globalization;
using System.Text;
using KvEngine.Memory;

namespace KvEngine.DbBench;

/// <summary>
/// Prints where the process's memory went: the peak resident set (the operating system's
/// high-water mark), then the breakdown at the highest sampled resident set and at the end of the
/// run (<see cref="MemorySampler"/>): the managed heap (GC), the engine's memtables, table readers
/// (memory outside the block cache) and block cache, KvEngine's native allocator, and the rest
/// (runtime, code, thread stacks, malloc's heap: for RocksDB, where all of its memory lives).
/// Stateless.
/// </summary>
internal static class MemoryReport
{
    private const double Mb = 1 << 20;

    /// <summary>KvEngine's figures: its properties and its native allocator.</summary>
    public static EngineMemory KvEngineMemory(Func<string, string?> property)
    {
        MemoryUsage native = NativeAllocator.Shared.GetUsage();
        var byUse = default(NativeUseBytes);
        NativeAllocator.Shared.GetLiveBytesByUse(byUse);
        return new EngineMemory(Bytes(property, "rocksdb.cur-size-all-mem-tables"), Bytes(property, "rocksdb.estimate-table-readers-mem"),
            Bytes(property, "rocksdb.block-cache-usage"), Bytes(property, "rocksdb.block-cache-pinned-usage"), native.AllocatedBytes, native.ResidentBytes, byUse);
    }

    /// <summary>RocksDB's figures: its properties (its memory is malloc's, no allocator figures).</summary>
    public static EngineMemory RocksDbMemory(Func<string, string?> property) =>
        new(Bytes(property, "rocksdb.cur-size-all-mem-tables"), Bytes(property, "rocksdb.estimate-table-readers-mem"),
            Bytes(property, "rocksdb.block-cache-usage"), Bytes(property, "rocksdb.block-cache-pinned-usage"), -1, -1);

    private static long Bytes(Func<string, string?> property, string name) =>
        long.TryParse(property(name), NumberStyles.None, CultureInfo.InvariantCulture, out long v) ? v : -1;

    /// <param name="output">Where the lines go.</param>
    /// <param name="sampler">The run's sampler: its peak snapshot, and one taken now.</param>
    public static void Print(TextWriter output, MemorySampler sampler)
    {
        using Process self = Process.GetCurrentProcess();
        MemorySnapshot atPeak = sampler.AtPeak;
        MemorySnapshot atEnd = sampler.Capture();
        long hugePages = AnonymousHugePageBytes();
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"Memory: peak RSS {self.PeakWorkingSet64 / Mb:F1} MB (highest sample {atPeak.Rss / Mb:F1} MB, every {sampler.IntervalMs} ms), RSS {atEnd.Rss / Mb:F1} MB at the end")
            + (hugePages >= 0 ? string.Create(CultureInfo.InvariantCulture, $" ({hugePages / Mb:F1} MB of it on transparent huge pages)") : ""));
        if (atPeak.Rss > 0)
        {
            output.WriteLine(Format("Memory at peak", atPeak));
        }
        output.WriteLine(Format("Memory at end", atEnd));
        GCMemoryInfo gc = GC.GetGCMemoryInfo();
        ReadOnlySpan<GCGenerationInfo> gens = gc.GenerationInfo;
        string[] names = ["gen0", "gen1", "gen2", "LOH", "POH"];
        var line = new StringBuilder("GC after last collection (#").Append(gc.Index).Append("):");
        for (int i = 0; i < gens.Length && i < names.Length; i++)
        {
            line.Append(CultureInfo.InvariantCulture, $" {names[i]} {gens[i].SizeAfterBytes / Mb:F1} MB");
        }
        output.WriteLine(line.ToString());
    }

    /// <summary>One snapshot as "RSS = GC + engine + rest".</summary>
    public static string Format(string label, MemorySnapshot s)
    {
        EngineMemory e = s.Engine;
        var sb = new StringBuilder();
        CultureInfo c = CultureInfo.InvariantCulture;
        sb.Append(c, $"{label} ({s.Phase}, {s.Seconds:F1} s): RSS {s.Rss / Mb:F1} MB = GC heap {s.GcHeap / Mb:F1} MB (at the last GC: committed {s.GcCommitted / Mb:F1} MB, LOH {s.GcLargeObjects / Mb:F1} MB)");
        long engineBytes;
        if (e.NativeResident >= 0)
        {
            sb.Append(c, $" + native allocator {e.NativeResident / Mb:F1} MB resident (live {e.NativeLive / Mb:F1} MB");
            AppendByUse(sb, e.NativeByUse);

            sb.Append(')');
            engineBytes = e.NativeResident;
        }
        else
        {
            engineBytes = Math.Max(0, e.MemTables) + Math.Max(0, e.TableReaders) + Math.Max(0, e.BlockCache);
            sb.Append(c, $" + engine {engineBytes / Mb:F1} MB");
        }
        sb.Append(c, $" + rest {(s.Rss - Math.Max(s.GcHeap, s.GcCommitted) - engineBytes) / Mb:F1} MB (runtime, code, stacks, malloc)");
        sb.Append(c, $"; engine: memtables {Field(e.MemTables)}, table readers {Field(e.TableReaders)}, block cache {Field(e.BlockCache)} (pinned {Field(e.BlockCachePinned)})");
        return sb.ToString();
    }

    /// <summary>": memtables 1.0 MB, table blocks 2.0 MB, ..." for the uses that hold anything.</summary>
    private static void AppendByUse(StringBuilder sb, NativeUseBytes byUse)
    {
        ReadOnlySpan<long> bytes = byUse;
        string separator = ": ";
        for (int i = 0; i < bytes.Length; i++)
        {
            if (bytes[i] != 0 || i == (int)NativeUse.Memtable)
            {
                sb.Append(separator).Append(UseName((NativeUse)i)).Append(' ').Append(Field(bytes[i]));
                separator = ", ";
            }
        }
    }

    private static string UseName(NativeUse use) => use switch
    {
        NativeUse.Memtable => "memtables",
        NativeUse.TableBlock => "table blocks",
        NativeUse.Filter => "filters",
        NativeUse.FilterBuild => "filter builds",
        NativeUse.BuildBuffer => "build buffers",
        NativeUse.SecondaryCache => "secondary cache",
        NativeUse.CacheEntry => "cache entries",
        NativeUse.Other => "other",
        _ => "use " + ((int)use).ToString(CultureInfo.InvariantCulture),
    };

    /// <summary>AnonHugePages of /proc/self/smaps_rollup (Linux), or -1 where there is none.</summary>
    private static long AnonymousHugePageBytes()
    {
        const string Path = "/proc/self/smaps_rollup";
        if (!OperatingSystem.IsLinux() || !File.Exists(Path))
        {
            return -1;
        }
        foreach (string line in File.ReadLines(Path))
        {
            if (line.StartsWith("AnonHugePages:", StringComparison.Ordinal))
            {
                string[] parts = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
                return parts.Length >= 2 && long.TryParse(parts[1], NumberStyles.None, CultureInfo.InvariantCulture, out long kb) ? kb * 1024 : -1;
            }
        }
        return -1;
    }

    private static string Field(long bytes) =>
        bytes < 0 ? "?" : (bytes / Mb).ToString("F1", CultureInfo.InvariantCulture) + " MB";
}
