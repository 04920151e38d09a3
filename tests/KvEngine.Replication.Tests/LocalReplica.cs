using DotNext.Net.Cluster.Consensus.Raft;
using DotNext.Net.Cluster.Consensus.Raft.StateMachine;

namespace KvEngine.Replication.Tests;

/// <summary>
/// A state machine driven by DotNext's real write-ahead log without a cluster: entries are
/// appended and committed by hand, as a leader would. Not thread-safe.
/// </summary>
internal sealed class LocalReplica : IAsyncDisposable
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(20);

    private LocalReplica(KvStateMachine machine, WriteAheadLog log)
    {
        Machine = machine;
        Log = log;
    }

    public KvStateMachine Machine { get; }

    public WriteAheadLog Log { get; }

    public static async Task<LocalReplica> OpenAsync(string directory, KvStateMachineOptions? options = null)
    {
        KvStateMachine machine = KvStateMachine.Open(directory, options);
        var log = new WriteAheadLog(new WriteAheadLog.Options { Location = Path.Combine(directory, "raft-log") }, machine);
        using var cts = new CancellationTokenSource(s_timeout);
        await log.InitializeAsync(cts.Token);
        return new LocalReplica(machine, log);
    }

    /// <summary>Appends one entry per payload (term 1), commits them and waits until they are applied.</summary>
    public async Task<long> AppendAndApplyAsync(params byte[][] payloads)
    {
        using var cts = new CancellationTokenSource(s_timeout);
        long last = 0;
        foreach (byte[] payload in payloads)
        {
            last = await Log.AppendAsync(new BinaryLogEntry { Content = payload, Term = 1 }, cts.Token);
        }
        await Log.CommitAsync(last, cts.Token);
        await Log.WaitForApplyAsync(last, cts.Token);
        return last;
    }

    public byte[]? Get(string key) => Machine.Read(key, static (db, k) => db.Get(System.Text.Encoding.UTF8.GetBytes(k)));

    public async ValueTask DisposeAsync()
    {
        await Log.DisposeAsync();
        Machine.Dispose();
    }

    public static byte[] Put(string key, string value)
    {
        using var batch = new WriteBatch();
        batch.Put(System.Text.Encoding.UTF8.GetBytes(key), System.Text.Encoding.UTF8.GetBytes(value));
        return batch.Data.ToArray();
    }

    public static byte[] Add(string key, ulong delta)
    {
        using var batch = new WriteBatch();
        batch.Merge(System.Text.Encoding.UTF8.GetBytes(key), BitConverter.GetBytes(delta));
        return batch.Data.ToArray();
    }
}
