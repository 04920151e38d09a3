using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;
using KvEngine.Storage;
using KvEngine.Storage.IO;
using Microsoft.Win32.SafeHandles;

namespace KvEngine.DbBench;

/// <summary>
/// kvbench -benchmarks=iouring: random 4 KiB reads with O_DIRECT from one large file through each
/// block-read engine (io_uring, thread pool) at each queue depth, the workload of
/// <c>fio --ioengine=io_uring --direct=1 --rw=randread --bs=4k --iodepth=N</c> on the same file.
/// One thread issues; depth N is N reads kept in flight through the async API (N awaiting loops).
/// Prints IOPS and the latency histogram (µs) of each cell. Linux only (O_DIRECT).
/// </summary>
internal sealed class IoEngineBench
{
    private const int BlockSize = 4096;
    private readonly BenchFlags _flags;
    private readonly IoEngineBenchFlags _f;

    public IoEngineBench(BenchFlags flags)
    {
        _flags = flags;
        _f = flags.IoEngine;
    }

    public int Run()
    {
        if (!OperatingSystem.IsLinux())
        {
            Console.Error.WriteLine("-benchmarks=iouring needs Linux (O_DIRECT, io_uring)");
            return 1;
        }
        string path = _f.File ?? Path.Combine(_flags.Db, "iouring.dat");
        EnsureFile(path, _f.FileSize);
        int seconds = _flags.Duration > 0 ? _flags.Duration : 10;
        ThreadPool.SetMinThreads(Math.Max(64, _f.Depths.Max() * 2), 64);
        int fd = PosixNative.Open(path, PosixNative.ORdOnly | ODirect);
        if (fd < 0)
        {
            Console.Error.WriteLine($"open({path}, O_DIRECT) failed: errno {Marshal.GetLastPInvokeError()}");
            return 1;
        }
        using var file = new SafeFileHandle(fd, ownsHandle: true);
        long blocks = new FileInfo(path).Length / BlockSize;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"iouring: {path}, {blocks * BlockSize / (1 << 20)} MiB, random {BlockSize} B reads with O_DIRECT, {seconds} s per cell"));
        foreach (string engineName in _f.Engines)
        {
            using IBlockReadEngine engine = BlockReadEngines.Create(new BlockReadEngineOptions
            {
                Kind = engineName == "io_uring" ? BlockReadEngineKind.IoUring : BlockReadEngineKind.ThreadPool,
                RingEntries = (uint)Math.Max(64, _f.Depths.Max() * 2),
            });
            foreach (int depth in _f.Depths)
            {
                RunCell(engine, engineName, file, blocks, depth, seconds);
            }
        }
        return 0;
    }

    private static int ODirect => RuntimeInformation.ProcessArchitecture is Architecture.Arm64 or Architecture.Arm ? 0x10000 : 0x4000;

    private static void RunCell(IBlockReadEngine engine, string name, SafeFileHandle file, long blocks, int depth, int seconds)
    {
        var histograms = new Histogram[depth];
        var counts = new long[depth];
        using var stop = new CancellationTokenSource();
        var lanes = new Task[depth];
        var sw = Stopwatch.StartNew();
        for (int lane = 0; lane < depth; lane++)
        {
            histograms[lane] = new Histogram();
            lanes[lane] = Lane(engine, file, blocks, lane, histograms[lane], counts, stop.Token);
        }
        Thread.Sleep(TimeSpan.FromSeconds(seconds));
        stop.Cancel();
        Task.WaitAll(lanes);
        double elapsed = sw.Elapsed.TotalSeconds;
        var all = new Histogram();
        foreach (Histogram h in histograms)
        {
            all.Merge(h);
        }
        long reads = counts.Sum();
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"{name,-10} iodepth={depth,-3}: {reads / elapsed,10:F0} IOPS {reads / elapsed * BlockSize / (1 << 20),8:F1} MiB/s  p50 {all.Percentile(50),8:F1} us  p99 {all.Percentile(99),8:F1} us  ({reads} reads in {elapsed:F1} s)"));
        Console.Write(all.Format());
    }

    private static async Task Lane(IBlockReadEngine engine, SafeFileHandle file, long blocks, int lane, Histogram histogram, long[] counts, CancellationToken stop)
    {
        await Task.Yield();
        var rng = new Random(lane * 7919 + 1);
        byte[] buffer = new byte[BlockSize];
        long n = 0;
        while (!stop.IsCancellationRequested)
        {
            long offset = rng.NextInt64(blocks) * BlockSize;
            long start = Stopwatch.GetTimestamp();
            int read = await engine.ReadAsync(file, buffer, offset).ConfigureAwait(false);
            histogram.Add(Stopwatch.GetElapsedTime(start).TotalMicroseconds);
            if (read != BlockSize)
            {
                throw new IOException($"short read at {offset}: {read}");
            }
            n++;
        }
        counts[lane] = n;
    }

    /// <summary>Writes the file with random bytes (so no block is a hole) unless it already has the size.</summary>
    private static void EnsureFile(string path, long size)
    {
        if (File.Exists(path) && new FileInfo(path).Length == size)
        {
            return;
        }
        Directory.CreateDirectory(Path.GetDirectoryName(Path.GetFullPath(path))!);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"iouring: writing {size >> 20} MiB of random bytes to {path}"));
        byte[] chunk = new byte[1 << 20];
        var rng = new Random(42);
        using var stream = new FileStream(path, FileMode.Create, FileAccess.Write, FileShare.Read, 1 << 20);
        for (long written = 0; written < size; written += chunk.Length)
        {
            rng.NextBytes(chunk);
            stream.Write(chunk, 0, (int)Math.Min(chunk.Length, size - written));
        }
        stream.Flush(flushToDisk: true);
    }
}
