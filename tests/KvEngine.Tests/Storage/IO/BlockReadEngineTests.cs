using KvEngine.Storage.IO;
using Microsoft.Win32.SafeHandles;

namespace KvEngine.Tests.Storage.IO;

/// <summary>The read contract, the same for the io_uring engine and the thread-pool fallback.</summary>
public sealed class BlockReadEngineTests
{
    [Theory]
    [EngineData("io_uring")]
    [EngineData("threadpool")]
    public async Task OddLengthsAndOffsetsReadTheFilesBytes(string kind)
    {
        using var files = new BlockReadTestFiles();
        using IBlockReadEngine engine = BlockReadTestFiles.Create(kind);
        using SafeFileHandle file = files.OpenRead();
        (long Offset, int Length)[] reads = [(0, 1), (1, 4095), (4095, 4097), (12_345, 65_537), (299_000, 1_001), (7, 262_144 + 3), (0, 300_001)];
        foreach ((long offset, int length) in reads)
        {
            byte[] destination = new byte[length];
            int n = await engine.ReadAsync(file, destination, offset);
            Assert.Equal(length, n);
            Assert.True(files.Bytes.AsSpan((int)offset, length).SequenceEqual(destination), $"bytes at {offset}+{length}");
        }
    }

    [Theory]
    [EngineData("io_uring")]
    [EngineData("threadpool")]
    public async Task ReadsAtTheEndAreShortAndPastTheEndEmpty(string kind)
    {
        using var files = new BlockReadTestFiles();
        using IBlockReadEngine engine = BlockReadTestFiles.Create(kind);
        using SafeFileHandle file = files.OpenRead();
        byte[] destination = new byte[8192];
        destination.AsSpan().Fill(0xEE);
        long offset = files.Bytes.Length - 100;
        Assert.Equal(100, await engine.ReadAsync(file, destination, offset));
        Assert.True(files.Bytes.AsSpan((int)offset).SequenceEqual(destination.AsSpan(0, 100)));
        Assert.True(destination.AsSpan(100).IndexOfAnyExcept((byte)0xEE) < 0, "bytes past the short read are untouched");
        Assert.Equal(0, await engine.ReadAsync(file, destination, files.Bytes.Length));
        Assert.Equal(0, await engine.ReadAsync(file, destination, files.Bytes.Length + 1_000_000L));
        Assert.Equal(0, await engine.ReadAsync(file, Memory<byte>.Empty, 5));
    }

    [Theory]
    [EngineData("io_uring")]
    [EngineData("threadpool")]
    public async Task ManyThreadsWithMoreReadsInFlightThanTheRingHoldsAllReadTheirBytes(string kind)
    {
        using var files = new BlockReadTestFiles(1 << 20);
        // 8 entries (7 usable) against 8 threads x 64 reads at once: most reads wait in the backlog.
        using IBlockReadEngine engine = BlockReadTestFiles.Create(kind, ringEntries: 8);
        using SafeFileHandle file = files.OpenRead();
        const int Threads = 8;
        const int PerThread = 64;
        const int Rounds = 8;
        var start = new Barrier(Threads);
        Task[] workers = new Task[Threads];
        for (int t = 0; t < Threads; t++)
        {
            int seed = t;
            workers[t] = Task.Factory.StartNew(() =>
            {
                var rng = new Random(seed);
                start.SignalAndWait();
                for (int round = 0; round < Rounds; round++)
                {
                    var offsets = new long[PerThread];
                    var buffers = new byte[PerThread][];
                    var tasks = new ValueTask<int>[PerThread];
                    var batch = new BlockRead[PerThread / 2];
                    for (int i = 0; i < PerThread; i++)
                    {
                        offsets[i] = rng.NextInt64(files.Bytes.Length - 9000);
                        buffers[i] = new byte[1 + rng.Next(9000)];
                        if (i < PerThread / 2)
                        {
                            tasks[i] = engine.ReadAsync(file, buffers[i], offsets[i]);
                        }
                        else
                        {
                            batch[i - PerThread / 2] = new BlockRead(file, buffers[i], offsets[i]);
                        }
                    }
                    engine.ReadBatch(batch, tasks.AsSpan(PerThread / 2));
                    for (int i = 0; i < PerThread; i++)
                    {
                        int n = tasks[i].AsTask().GetAwaiter().GetResult();
                        Assert.Equal(buffers[i].Length, n);
                        Assert.True(files.Bytes.AsSpan((int)offsets[i], n).SequenceEqual(buffers[i]), $"thread {seed} round {round} read {i}");
                    }
                }
            }, TaskCreationOptions.LongRunning);
        }
        await Task.WhenAll(workers);
        if (engine is IoUringBlockReadEngine ring)
        {
            Assert.Equal(7, ring.Capacity);
            Assert.True(ring.BackloggedReads > 0, "the full-ring path was taken");
        }
    }

    [Theory]
    [EngineData("io_uring")]
    [EngineData("threadpool")]
    public void ATokenCancelledBeforeTheReadNeverReadsAndCompletesCancelled(string kind)
    {
        using var files = new BlockReadTestFiles();
        using IBlockReadEngine engine = BlockReadTestFiles.Create(kind);
        using SafeFileHandle file = files.OpenRead();
        using var cts = new CancellationTokenSource();
        cts.Cancel();
        byte[] destination = new byte[4096];
        ValueTask<int> read = engine.ReadAsync(file, destination, 0, cts.Token);
        Assert.True(read.IsCanceled);
        var batch = new ValueTask<int>[2];
        engine.ReadBatch([new BlockRead(file, destination, 0), new BlockRead(file, destination, 4096)], batch, cts.Token);
        Assert.True(batch[0].IsCanceled && batch[1].IsCanceled);
        Assert.True(destination.AsSpan().IndexOfAnyExcept((byte)0) < 0);
    }

    [Theory]
    [EngineData("io_uring")]
    [EngineData("threadpool")]
    public async Task AnErrnoBecomesAnIOExceptionCarryingIt(string kind)
    {
        using var files = new BlockReadTestFiles();
        using IBlockReadEngine engine = BlockReadTestFiles.Create(kind);
        using SafeFileHandle writeOnly = File.OpenHandle(files.FilePath, FileMode.Open, FileAccess.Write);
        IOException e = await Assert.ThrowsAsync<IOException>(async () => await engine.ReadAsync(writeOnly, new byte[10], 0));
        Assert.Equal(9, e.HResult); // EBADF
        Assert.Contains("EBADF", e.Message, StringComparison.Ordinal);
        SafeFileHandle closed = files.OpenRead();
        closed.Dispose();
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await engine.ReadAsync(closed, new byte[10], 0));
        Assert.Throws<ArgumentOutOfRangeException>(() => engine.ReadAsync(writeOnly, new byte[10], -1));
    }

    [Theory]
    [EngineData("io_uring")]
    [EngineData("threadpool")]
    public async Task ReadsAfterDisposeFailWithObjectDisposed(string kind)
    {
        using var files = new BlockReadTestFiles();
        IBlockReadEngine engine = BlockReadTestFiles.Create(kind);
        using SafeFileHandle file = files.OpenRead();
        Assert.Equal(10, await engine.ReadAsync(file, new byte[10], 0));
        engine.Dispose();
        engine.Dispose();
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await engine.ReadAsync(file, new byte[10], 0));
    }

    [Theory]
    [EngineData("io_uring")]
    [EngineData("threadpool")]
    public async Task DisposeWithReadsInFlightCompletesEveryReadAndNeverHangs(string kind)
    {
        using var files = new BlockReadTestFiles(1 << 20);
        using SafeFileHandle file = files.OpenRead();
        var rng = new Random(5);
        for (int trial = 0; trial < 200; trial++)
        {
            IBlockReadEngine engine = BlockReadTestFiles.Create(kind, ringEntries: 8);
            const int Reads = 40;
            var offsets = new long[Reads];
            var buffers = new byte[Reads][];
            var tasks = new ValueTask<int>[Reads];
            for (int i = 0; i < Reads; i++)
            {
                offsets[i] = rng.NextInt64(files.Bytes.Length - 4096);
                buffers[i] = new byte[4096];
                tasks[i] = engine.ReadAsync(file, buffers[i], offsets[i]);
            }
            engine.Dispose(); // returns once the reaper has exited and the ring is gone
            for (int i = 0; i < Reads; i++)
            {
                try
                {
                    int n = await tasks[i];
                    Assert.Equal(4096, n);
                    Assert.True(files.Bytes.AsSpan((int)offsets[i], n).SequenceEqual(buffers[i]));
                }
                catch (ObjectDisposedException)
                {
                    Assert.True(buffers[i].AsSpan().IndexOfAnyExcept((byte)0) < 0, "a read that failed wrote nothing");
                }
            }
        }
    }

    [Theory]
    [EngineData("io_uring")]
    [EngineData("threadpool")]
    public void AReadAllocatesNothingOnTheCallersThreadOnceWarm(string kind)
    {
        using var files = new BlockReadTestFiles();
        using IBlockReadEngine engine = BlockReadTestFiles.Create(kind);
        using SafeFileHandle file = files.OpenRead();
        Memory<byte> destination = new byte[4096];
        for (int i = 0; i < 100; i++)
        {
            WaitWithoutAllocating(engine.ReadAsync(file, destination, i * 7));
        }
        long bytes = 0;
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 1000; i++)
        {
            bytes += WaitWithoutAllocating(engine.ReadAsync(file, destination, i * 13));
        }
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Equal(4096 * 1000, bytes);
        Assert.Equal(0, allocated);
    }

    private static int WaitWithoutAllocating(ValueTask<int> read)
    {
        var spin = new SpinWait();
        while (!read.IsCompleted)
        {
            spin.SpinOnce();
        }
        return read.GetAwaiter().GetResult();
    }
}
