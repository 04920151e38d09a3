using System.Net;
using System.Net.Sockets;

namespace KvEngine.Replication.Tests;

/// <summary>
/// Helpers for in-process clusters on 127.0.0.1: free ports, condition waits with a deadline,
/// and waits for a leader. Stateless and thread-safe.
/// </summary>
internal static class ClusterFixture
{
    public static readonly TimeSpan Deadline = TimeSpan.FromSeconds(30);

    /// <summary>Loopback endpoints on ports the OS reports free (bound, then released).</summary>
    public static IPEndPoint[] FreeEndPoints(int count)
    {
        var listeners = new TcpListener[count];
        for (int i = 0; i < count; i++)
        {
            listeners[i] = new TcpListener(IPAddress.Loopback, 0);
            listeners[i].Start();
        }
        var endPoints = listeners.Select(l => (IPEndPoint)l.LocalEndpoint).ToArray();
        foreach (TcpListener listener in listeners)
        {
            listener.Stop();
        }
        return endPoints;
    }

    public static ReplicatedKvNodeOptions Options(IPEndPoint local, IPEndPoint[] members, string directory, long snapshotInterval = 10_000)
    {
        var options = new ReplicatedKvNodeOptions
        {
            LocalEndPoint = local,
            DataDirectory = directory,
            StateMachine = new KvStateMachineOptions { SnapshotInterval = snapshotInterval },
            // Longer than DotNext's 150-300 ms default: CI runs these beside other test assemblies
            // on two cores, and a leader that misses heartbeats under load would be deposed mid-test.
            LowerElectionTimeout = 1000,
            UpperElectionTimeout = 2000,
        };
        foreach (IPEndPoint member in members)
        {
            options.Members.Add(member);
        }
        return options;
    }

    /// <summary>
    /// Polls <paramref name="condition"/> until it holds; fails the test past the deadline. The
    /// poll interval only bounds how soon the change is seen: correctness never depends on it.
    /// </summary>
    public static async Task WaitUntilAsync(Func<bool> condition, string what, TimeSpan? deadline = null)
    {
        using var cts = new CancellationTokenSource(deadline ?? Deadline);
        while (!condition())
        {
            try
            {
                await Task.Delay(10, cts.Token);
            }
            catch (OperationCanceledException)
            {
                Assert.Fail($"Timed out waiting until {what}.");
            }
        }
    }

    public static async Task<ReplicatedKvNode> WaitForLeaderNodeAsync(IReadOnlyList<ReplicatedKvNode> nodes)
    {
        ReplicatedKvNode? leader = null;
        await WaitUntilAsync(() => (leader = nodes.FirstOrDefault(n => n.IsLeader)) != null, "a node leads");
        return leader!;
    }
}
