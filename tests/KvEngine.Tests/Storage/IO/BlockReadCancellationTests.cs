using KvEngine.Storage.IO;
using Microsoft.Win32.SafeHandles;

namespace KvEngine.Tests.Storage.IO;

/// <summary>
/// Cancellation of a read the device has in hand, and the buffer-ownership invariant: the caller
/// gets <see cref="OperationCanceledException"/> at once, the device still completes into the
/// operation's own buffer afterwards, the caller's destination is never written, and the
/// operation returns to the pool only after the device is done. Reads are held in flight
/// deterministically: on the ring by reading an empty FIFO, on the thread pool by a hook that
/// blocks the pool thread before its pread.
/// </summary>
public sealed class BlockReadCancellationTests
{
    [IoUringFact]
    public async Task RingCancelInFlightCompletesAtOnceAndTheKernelLaterWritesOnlyTheOperationsBuffer()
    {
        using var files = new BlockReadTestFiles();
        // 2 entries: one usable, so the ASYNC_CANCEL has to wait for room and the read stays in the kernel.
        using IBlockReadEngine engine = BlockReadTestFiles.Create("io_uring", ringEntries: 2);
        var ring = (IoUringBlockReadEngine)engine;
        Assert.Equal(1, ring.Capacity);
        using SafeFileHandle fifo = files.OpenFifo("a");
        var returned = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        ring.Returned = _ => returned.TrySetResult();
        using var cts = new CancellationTokenSource();
        byte[] destination = new byte[64];
        destination.AsSpan().Fill(0xEE);
        ValueTask<int> read = engine.ReadAsync(fifo, destination, 0, cts.Token);
        Assert.False(read.IsCompleted); // an empty FIFO: nothing can complete it
        cts.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await read);
        Assert.False(returned.Task.IsCompleted, "the operation is still the kernel's: not back in the pool");
        Assert.Equal(0, ring.IdleOperations);

        // The kernel still owns the read: feeding the FIFO completes it into the operation's buffer.
        BlockReadTestFiles.WriteFifo(fifo, "hello"u8);
        await returned.Task;
        Assert.True(destination.AsSpan().IndexOfAnyExcept((byte)0xEE) < 0, "the caller's destination was never written");
        Assert.Equal(1, ring.IdleOperations);

        // The recycled operation serves the next read normally.
        using SafeFileHandle file = files.OpenRead();
        Assert.Equal(64, await engine.ReadAsync(file, destination, 10));
        Assert.True(files.Bytes.AsSpan(10, 64).SequenceEqual(destination));
    }

    [IoUringFact]
    public async Task RingCancelInFlightWithRoomWithdrawsTheReadFromTheKernel()
    {
        using var files = new BlockReadTestFiles();
        using IBlockReadEngine engine = BlockReadTestFiles.Create("io_uring", ringEntries: 8);
        var ring = (IoUringBlockReadEngine)engine;
        using SafeFileHandle fifo = files.OpenFifo("a");
        var returned = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        ring.Returned = _ => returned.TrySetResult();
        using var cts = new CancellationTokenSource();
        byte[] destination = new byte[64];
        ValueTask<int> read = engine.ReadAsync(fifo, destination, 0, cts.Token);
        Assert.False(read.IsCompleted);
        cts.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await read);
        await returned.Task; // the ASYNC_CANCEL ended the read in the kernel: its CQE came back without any data
        BlockReadTestFiles.WriteFifo(fifo, "late"u8);
        byte[] left = new byte[4];
        Assert.Equal(4, await engine.ReadAsync(fifo, left, 0));
        Assert.Equal("late"u8.ToArray(), left); // the cancelled read consumed nothing
    }

    [IoUringFact]
    public async Task RingBacklogCancelWithdrawsTheReadBeforeItReachesTheKernel()
    {
        using var files = new BlockReadTestFiles();
        using IBlockReadEngine engine = BlockReadTestFiles.Create("io_uring", ringEntries: 2);
        var ring = (IoUringBlockReadEngine)engine;
        using SafeFileHandle fifo = files.OpenFifo("a");
        ValueTask<int> holder = engine.ReadAsync(fifo, new byte[1], 0); // takes the one usable slot
        using var cts = new CancellationTokenSource();
        ValueTask<int> queued = engine.ReadAsync(fifo, new byte[8], 0, cts.Token);
        Assert.Equal(1, ring.BackloggedReads);
        cts.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await queued);
        Assert.Equal(1, ring.IdleOperations); // never reached the kernel: back in the pool at once
        BlockReadTestFiles.WriteFifo(fifo, "xy"u8);
        Assert.Equal(1, await holder);
    }

    [IoUringFact]
    public async Task RingDisposeCancelsAReadThatWouldNeverFinish()
    {
        using var files = new BlockReadTestFiles();
        IBlockReadEngine engine = BlockReadTestFiles.Create("io_uring", ringEntries: 4);
        using SafeFileHandle fifo = files.OpenFifo("a");
        using SafeFileHandle file = files.OpenRead();
        ValueTask<int> stuck = engine.ReadAsync(fifo, new byte[8], 0);
        ValueTask<int>[] more = new ValueTask<int>[6];
        for (int i = 0; i < more.Length; i++)
        {
            more[i] = engine.ReadAsync(fifo, new byte[8], 0); // the ring holds 3: the rest are backlogged
        }
        engine.Dispose();
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await stuck);
        foreach (ValueTask<int> read in more)
        {
            await Assert.ThrowsAsync<ObjectDisposedException>(async () => await read);
        }
    }

    [Fact]
    public async Task ThreadPoolCancelDuringThePreadCompletesAtOnceAndNeverWritesTheDestination()
    {
        using var files = new BlockReadTestFiles();
        using var engine = new ThreadPoolBlockReadEngine();
        using var inRead = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        engine.BeforeRead = () =>
        {
            inRead.Set();
            release.Wait();
        };
        var returned = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        engine.Returned = _ => returned.TrySetResult();
        using SafeFileHandle file = files.OpenRead();
        using var cts = new CancellationTokenSource();
        byte[] destination = new byte[4096];
        destination.AsSpan().Fill(0xEE);
        ValueTask<int> read = engine.ReadAsync(file, destination, 0, cts.Token);
        inRead.Wait(); // a pool thread has the read
        cts.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await read);
        Assert.False(returned.Task.IsCompleted, "the pool thread still owns the operation");
        release.Set();
        await returned.Task;
        Assert.True(destination.AsSpan().IndexOfAnyExcept((byte)0xEE) < 0, "the caller's destination was never written");
    }
}
