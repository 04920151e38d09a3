using System.Globalization;

namespace KvEngine.DbBench;

/// <summary>
/// Flags of the iouring mode (kvbench -benchmarks=iouring): -iouring_file (default
/// &lt;db&gt;/iouring.dat), -iouring_file_size (bytes, default 4 GiB), -iouring_depths (reads kept
/// in flight, default 1,32), -iouring_engines (io_uring,threadpool). -duration (seconds per cell,
/// 10 unless given) is the shared <see cref="BenchFlags"/> one.
/// </summary>
internal sealed class IoEngineBenchFlags
{
    public string? File { get; private set; }
    public long FileSize { get; private set; } = 4L << 30;
    public int[] Depths { get; private set; } = [1, 32];
    public string[] Engines { get; private set; } = ["io_uring", "threadpool"];

    /// <summary>Takes an iouring flag; false when <paramref name="name"/> is not one.</summary>
    public bool TrySet(string name, string v)
    {
        switch (name)
        {
            case "iouring_file": File = v; return true;
            case "iouring_file_size": FileSize = Math.Max(1L << 20, long.Parse(v, CultureInfo.InvariantCulture) & ~4095L); return true;
            case "iouring_depths": Depths = v.Split(',').Select(d => int.Parse(d, CultureInfo.InvariantCulture)).ToArray(); return true;
            case "iouring_engines":
                Engines = v.Split(',');
                if (Engines.Any(e => e is not ("io_uring" or "threadpool")))
                {
                    throw new ArgumentException($"-iouring_engines={v}: the engines are io_uring and threadpool");
                }
                return true;
            default: return false;
        }
    }
}
