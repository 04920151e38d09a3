using System.Net;
using System.Text;

namespace KvEngine.Replication.Tests;

/// <summary>Real three-node clusters on 127.0.0.1 (DotNext's TCP transport), in one process.</summary>
public sealed class ReplicatedKvNodeTests
{
    private static byte[] Put(string key, string value)
    {
        using var batch = new WriteBatch();
        batch.Put(Encoding.UTF8.GetBytes(key), Encoding.UTF8.GetBytes(value));
        return batch.Data.ToArray();
    }

    private static async Task WriteAsync(ReplicatedKvNode leader, string key, string value)
    {
        using var cts = new CancellationTokenSource(ClusterFixture.Deadline);
        using var batch = WriteBatch.FromData(Put(key, value));
        await leader.WriteAsync(batch, cts.Token);
    }

    private static async Task<ReplicatedKvNode[]> StartAsync(IPEndPoint[] members, IEnumerable<int> which, TempDirectory dir, Func<int, long> snapshotInterval)
    {
        using var cts = new CancellationTokenSource(ClusterFixture.Deadline);
        return await Task.WhenAll(which.Select(i =>
            ReplicatedKvNode.StartAsync(ClusterFixture.Options(members[i], members, dir.Sub("node" + i), snapshotInterval(i)), cts.Token)));
    }

    private static async Task DisposeAllAsync(IEnumerable<ReplicatedKvNode> nodes)
    {
        foreach (ReplicatedKvNode node in nodes)
        {
            await node.DisposeAsync();
        }
    }

    [Fact]
    public async Task Three_nodes_replicate_writes_through_the_leader_and_agree()
    {
        using var dir = new TempDirectory();
        IPEndPoint[] members = ClusterFixture.FreeEndPoints(3);
        ReplicatedKvNode[] nodes = await StartAsync(members, [0, 1, 2], dir, _ => 10_000);
        try
        {
            ReplicatedKvNode leader = await ClusterFixture.WaitForLeaderNodeAsync(nodes);
            for (int i = 0; i < 30; i++)
            {
                await WriteAsync(leader, "k" + i.ToString("D2", System.Globalization.CultureInfo.InvariantCulture), "v" + i);
            }
            // Acknowledged = committed by a majority and applied on the leader.
            Assert.Equal("v29", Encoding.UTF8.GetString(leader.Read(0, static (db, _) => db.Get("k29"u8))!));

            ReplicatedKvNode follower = nodes.First(n => !ReferenceEquals(n, leader));
            await ClusterFixture.WaitUntilAsync(() => Equals(follower.LeaderEndPoint, leader.LocalEndPoint), "the follower knows the leader");
            using (var batch = WriteBatch.FromData(Put("x", "y")))
            {
                var refused = await Assert.ThrowsAsync<KvNotLeaderException>(async () => await follower.WriteAsync(batch));
                Assert.Equal(leader.LocalEndPoint, refused.LeaderEndPoint);
            }

            // A linearizable read is the leader's: it sees the last acknowledged write there, and a
            // follower refuses it, naming the leader (DotNext's follower barrier trusts an
            // unconfirmed leader's commit index).
            using (var cts = new CancellationTokenSource(ClusterFixture.Deadline))
            {
                byte[]? value = await leader.GetAsync("k29"u8.ToArray(), ReadConsistency.Linearizable, cts.Token);
                Assert.Equal("v29", Encoding.UTF8.GetString(value!));
                var refusedRead = await Assert.ThrowsAsync<KvNotLeaderException>(
                    async () => await follower.GetAsync("k29"u8.ToArray(), ReadConsistency.Linearizable, cts.Token));
                Assert.Equal(leader.LocalEndPoint, refusedRead.LeaderEndPoint);
                await Assert.ThrowsAsync<KvNotLeaderException>(async () => await follower.ApplyReadBarrierAsync(cts.Token));
            }

            long applied = leader.AppliedIndex;
            await ClusterFixture.WaitUntilAsync(() => nodes.All(n => n.AppliedIndex >= applied), "every node applied the writes");
            string digest = leader.StateMachine.ComputeDigest();
            Assert.All(nodes, n => Assert.Equal(digest, n.StateMachine.ComputeDigest()));

            ReplicationStatus status = leader.GetStatus();
            Assert.Equal(ReplicaRole.Leader, status.Role);
            Assert.True(status.Term >= 1);
            Assert.True(status.CommitIndex >= 30, $"commit index {status.CommitIndex}");
            Assert.True(status.AppliedIndex >= 30);
            Assert.Equal(leader.LocalEndPoint, status.LeaderEndPoint);
            Assert.Equal(ReplicaRole.Follower, follower.GetStatus().Role);
        }
        finally
        {
            await DisposeAllAsync(nodes);
        }
    }

    [Fact]
    public async Task A_node_that_joins_late_catches_up_from_a_snapshot()
    {
        using var dir = new TempDirectory();
        IPEndPoint[] members = ClusterFixture.FreeEndPoints(3);
        // Nodes 0 and 1 (a majority) snapshot every 5 entries; node 2 never takes one itself, so a
        // snapshot it holds can only have come from the leader.
        List<ReplicatedKvNode> nodes = [.. await StartAsync(members, [0, 1], dir, _ => 5)];
        try
        {
            ReplicatedKvNode leader = await ClusterFixture.WaitForLeaderNodeAsync(nodes);
            for (int i = 0; i < 20; i++)
            {
                await WriteAsync(leader, "k" + i, "v" + i);
            }
            Assert.True(leader.StateMachine.SnapshotIndex >= 15, $"snapshot index {leader.StateMachine.SnapshotIndex}");

            ReplicatedKvNode late = (await StartAsync(members, [2], dir, _ => long.MaxValue))[0];
            nodes.Add(late);
            long applied = leader.AppliedIndex;
            await ClusterFixture.WaitUntilAsync(() => late.AppliedIndex >= applied, "the late node caught up");
            Assert.True(late.StateMachine.SnapshotIndex >= 15, $"late node's snapshot index {late.StateMachine.SnapshotIndex}");
            Assert.Equal(leader.StateMachine.ComputeDigest(), late.StateMachine.ComputeDigest());

            // And it goes on applying entries after the snapshot.
            await WriteAsync(leader, "after", "snapshot");
            long last = leader.AppliedIndex;
            await ClusterFixture.WaitUntilAsync(() => late.AppliedIndex >= last, "the late node applied a new write");
            Assert.Equal("snapshot", Encoding.UTF8.GetString(late.Read(0, static (db, _) => db.Get("after"u8))!));
        }
        finally
        {
            await DisposeAllAsync(nodes);
        }
    }

    /// <summary>
    /// A leader starts its term with a no-op entry, which DotNext's log applies without handing it
    /// to the state machine. With no client write behind it, every node's applied index still
    /// reaches its commit index: after the first election, and again after the leader stops and
    /// the other two elect a successor (whose no-op is then the last entry).
    /// </summary>
    [Fact]
    public async Task Applied_index_reaches_the_commit_index_after_an_election_without_writes()
    {
        using var dir = new TempDirectory();
        IPEndPoint[] members = ClusterFixture.FreeEndPoints(3);
        List<ReplicatedKvNode> nodes = [.. await StartAsync(members, [0, 1, 2], dir, _ => 10_000)];
        try
        {
            ReplicatedKvNode first = await ClusterFixture.WaitForLeaderNodeAsync(nodes);
            await AllCaughtUpAsync(nodes, first.CommitIndex);
            Assert.All(nodes, n => Assert.Equal(0, n.StateMachine.AppliedIndex)); // no entry the database stored

            nodes.Remove(first);
            long before = first.CommitIndex;
            await first.DisposeAsync();
            ReplicatedKvNode second = await ClusterFixture.WaitForLeaderNodeAsync(nodes);
            Assert.True(second.CommitIndex > before, $"commit index {second.CommitIndex} after {before}: the new leader's no-op");
            await AllCaughtUpAsync(nodes, second.CommitIndex);
            ReplicationStatus status = second.GetStatus();
            Assert.Equal(status.CommitIndex, status.AppliedIndex);
        }
        finally
        {
            await DisposeAllAsync(nodes);
        }

        static async Task AllCaughtUpAsync(List<ReplicatedKvNode> nodes, long commit)
        {
            Assert.True(commit >= 1, "the leader's no-op is committed before it leads");
            // Every node learns of the commit; then what it applied is all of it.
            await ClusterFixture.WaitUntilAsync(() => nodes.All(n => n.CommitIndex >= commit), "every node knows the commit index " + commit);
            await ClusterFixture.WaitUntilAsync(() => nodes.All(n => n.AppliedIndex == n.CommitIndex), "every node applied up to its commit index");
        }
    }
}
