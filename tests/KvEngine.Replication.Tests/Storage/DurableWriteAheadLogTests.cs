using DotNext.IO.Log;
using DotNext.Net.Cluster.Consensus.Raft;
using DotNext.Net.Cluster.Consensus.Raft.StateMachine;
using KvEngine.Replication.Storage;

namespace KvEngine.Replication.Tests.Storage;

/// <summary>
/// What a follower's log holds after a crash right after it acknowledged entries. DotNext's
/// AppendEntries handler appends through <see cref="IAuditTrail{TEntry}"/> and replies at once; the
/// log's background flusher writes the checkpoint its recovery trusts. These tests hold the
/// flusher (its pass starts by reading the state machine's snapshot), append as the handler does,
/// copy the log directory as a SIGKILL would leave it (the page cache, nothing flushed by a
/// dispose) and open a log on the copy.
/// </summary>
public sealed class DurableWriteAheadLogTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task A_follower_append_returns_only_once_its_entries_survive_a_crash()
    {
        using var dir = new TempDirectory();
        using var cts = new CancellationTokenSource(s_timeout);
        var machine = new GatedStateMachine();
        await using var log = new DurableWriteAheadLog(new WriteAheadLog.Options { Location = dir.Sub("raft-log") }, machine);
        await OpenWithFlusherHeldAsync(log, machine, cts.Token);

        Task append = AppendAsFollowerAsync(log, cts.Token);
        // An append that waits for its flush cannot return while the flusher is held: after half a
        // second (any wait gives the same outcome) the flusher goes on. If the append returned
        // first, its entries must already be in the checkpoint; either way the copy is taken right
        // after the append returned.
        await Task.WhenAny(append, Task.Delay(TimeSpan.FromMilliseconds(500), cts.Token));
        bool returnedWhileHeld = append.IsCompleted;
        if (!returnedWhileHeld)
        {
            machine.ReleaseFlusher();
        }
        await append;
        CopyDirectory(dir.Sub("raft-log"), dir.Sub("after-kill"));
        machine.ReleaseFlusher();

        Assert.Equal(3, await LastIndexAfterRestartAsync(dir.Sub("after-kill"), cts.Token));
        Assert.False(returnedWhileHeld, "The append returned while the flusher was held.");
    }

    [Fact]
    public async Task DotNexts_own_log_acknowledges_a_follower_append_before_recovery_would_find_it()
    {
        // The defect DurableWriteAheadLog works around (DotNext.Net.Cluster 6.12). If this starts
        // failing (or waits for the flusher's safety release), DotNext made the follower path durable
        // and the workaround can go.
        using var dir = new TempDirectory();
        using var cts = new CancellationTokenSource(s_timeout);
        var machine = new GatedStateMachine();
        await using var log = new WriteAheadLog(new WriteAheadLog.Options { Location = dir.Sub("raft-log") }, machine);
        await OpenWithFlusherHeldAsync(log, machine, cts.Token);

        await AppendAsFollowerAsync(log, cts.Token);
        Assert.Equal(3, log.LastEntryIndex); // what the follower replies to the leader
        CopyDirectory(dir.Sub("raft-log"), dir.Sub("after-kill"));
        machine.ReleaseFlusher();

        Assert.Equal(0, await LastIndexAfterRestartAsync(dir.Sub("after-kill"), cts.Token));
    }

    /// <summary>
    /// Initializes the log, lets its flusher catch up, then holds it: a flush is asked for, and the
    /// method returns once the flusher's pass is blocked reading the snapshot (a pass that began
    /// before the hold ends first; the next one reads the snapshot and stays).
    /// </summary>
    private static async Task OpenWithFlusherHeldAsync(WriteAheadLog log, GatedStateMachine machine, CancellationToken token)
    {
        await log.InitializeAsync(token);
        await log.FlushAsync(token);
        Task parked = machine.HoldFlusher();
        Task flush = log.FlushAsync(token); // nothing to flush: it only wakes the flusher
        await parked.WaitAsync(token);
        await flush.WaitAsync(token);
    }

    /// <summary>RaftCluster's AppendEntries handler: three entries of term 1 from index 1, through the interface.</summary>
    private static Task AppendAsFollowerAsync(WriteAheadLog log, CancellationToken token)
    {
        var entries = new LogEntryProducer<BinaryLogEntry>(
        [
            new BinaryLogEntry { Content = new byte[] { 1 }, Term = 1 },
            new BinaryLogEntry { Content = new byte[] { 2 }, Term = 1 },
            new BinaryLogEntry { Content = new byte[] { 3 }, Term = 1 },
        ]);
        return ((IAuditTrail<IRaftLogEntry>)log).AppendAsync(entries, 1, skipCommitted: true, token).AsTask();
    }

    private static async Task<long> LastIndexAfterRestartAsync(string location, CancellationToken token)
    {
        await using var log = new WriteAheadLog(new WriteAheadLog.Options { Location = location }, new GatedStateMachine());
        await log.InitializeAsync(token);
        return log.LastEntryIndex;
    }

    private static void CopyDirectory(string from, string to)
    {
        Directory.CreateDirectory(to);
        foreach (string dir in Directory.GetDirectories(from, "*", SearchOption.AllDirectories))
        {
            Directory.CreateDirectory(Path.Combine(to, Path.GetRelativePath(from, dir)));
        }
        foreach (string file in Directory.GetFiles(from, "*", SearchOption.AllDirectories))
        {
            File.Copy(file, Path.Combine(to, Path.GetRelativePath(from, file)));
        }
    }

    /// <summary>
    /// A state machine without state whose snapshot, once <see cref="HoldFlusher"/> was called,
    /// blocks the log's flusher (which reads it at the start of every pass) until
    /// <see cref="ReleaseFlusher"/> (or a safety timeout). Thread-safe.
    /// </summary>
    private sealed class GatedStateMachine : IStateMachine
    {
        private readonly ManualResetEventSlim _open = new(initialState: true);
        private TaskCompletionSource _parked = new(TaskCreationOptions.RunContinuationsAsynchronously);

        /// <summary>Holds the next reader of the snapshot; the task completes once one is held.</summary>
        public Task HoldFlusher()
        {
            _parked = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            _open.Reset();
            return _parked.Task;
        }

        public void ReleaseFlusher() => _open.Set();

        ISnapshot? ISnapshotManager.Snapshot
        {
            get
            {
                if (!_open.IsSet)
                {
                    _parked.TrySetResult();
                    _open.Wait(s_timeout);
                }
                return null;
            }
        }

        ValueTask<long> IStateMachine.ApplyAsync(LogEntry entry, CancellationToken token) => ValueTask.FromResult(entry.Index);

        ValueTask ISnapshotManager.ReclaimGarbageAsync(long watermark, CancellationToken token) => ValueTask.CompletedTask;
    }
}
