using System.Net;
using DotNext.Net.Cluster;
using DotNext.Net.Cluster.Consensus.Raft;

namespace KvEngine.Replication.Tests;

/// <summary>
/// What a linearizable read throws when DotNext's read barrier fails because the leadership ended
/// under it (a leader paused by SIGSTOP, resumed after the others elected a successor): each of
/// DotNext's leadership and membership exceptions, injected through the node's
/// <see cref="ReplicatedKvNode.ReadBarrier"/> seam on a one-node cluster (its own leader), arrives
/// as <see cref="KvNotLeaderException"/> with DotNext's inside; anything else passes unchanged.
/// </summary>
public sealed class ReadBarrierErrorTests
{
    public static TheoryData<string> LeadershipErrors() => ["NotLeader", "QuorumUnreachable", "MemberUnavailable"];

    private static Exception Create(string name) => name switch
    {
        "NotLeader" => new NotLeaderException(),
        "QuorumUnreachable" => new QuorumUnreachableException(),
        // The member is only carried along; the exception names the leader that did not answer.
        "MemberUnavailable" => new MemberUnavailableException(null!, "The leader is unreachable."),
        _ => throw new ArgumentOutOfRangeException(nameof(name)),
    };

    private static async Task<(ReplicatedKvNode Node, TempDirectory Dir)> StartSingleNodeAsync()
    {
        var dir = new TempDirectory();
        IPEndPoint[] members = ClusterFixture.FreeEndPoints(1);
        using var cts = new CancellationTokenSource(ClusterFixture.Deadline);
        ReplicatedKvNode node = await ReplicatedKvNode.StartAsync(ClusterFixture.Options(members[0], members, dir.Sub("node0")), cts.Token);
        await ClusterFixture.WaitForLeaderNodeAsync([node]);
        return (node, dir);
    }

    [Theory]
    [MemberData(nameof(LeadershipErrors))]
    public async Task A_barrier_failing_with_a_leadership_error_throws_KvNotLeaderException(string error)
    {
        (ReplicatedKvNode node, TempDirectory dir) = await StartSingleNodeAsync();
        using (dir)
        {
            await using (node)
            {
                Exception injected = Create(error);
                node.ReadBarrier = _ => ValueTask.FromException(injected);

                var e = await Assert.ThrowsAsync<KvNotLeaderException>(async () => await node.ApplyReadBarrierAsync());
                Assert.Same(injected, e.InnerException);
                Assert.Null(e.LeaderEndPoint); // the only leader known is this node: no place to redirect to

                var read = await Assert.ThrowsAsync<KvNotLeaderException>(
                    async () => await node.GetAsync("k"u8.ToArray(), ReadConsistency.Linearizable));
                Assert.Same(injected, read.InnerException);

                // Thrown synchronously by the barrier, too.
                node.ReadBarrier = _ => throw injected;
                Assert.Same(injected, (await Assert.ThrowsAsync<KvNotLeaderException>(async () => await node.ApplyReadBarrierAsync())).InnerException);
            }
        }
    }

    [Fact]
    public async Task Other_barrier_failures_and_cancellation_pass_unchanged()
    {
        (ReplicatedKvNode node, TempDirectory dir) = await StartSingleNodeAsync();
        using (dir)
        {
            await using (node)
            {
                var broken = new InvalidOperationException("the log failed");
                node.ReadBarrier = _ => ValueTask.FromException(broken);
                Assert.Same(broken, await Assert.ThrowsAsync<InvalidOperationException>(async () => await node.ApplyReadBarrierAsync()));

                using var cts = new CancellationTokenSource();
                await cts.CancelAsync();
                node.ReadBarrier = token => ValueTask.FromCanceled(token);
                await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await node.ApplyReadBarrierAsync(cts.Token));

                // And the real barrier serves the read once nothing is injected.
                node.ReadBarrier = _ => ValueTask.CompletedTask;
                Assert.Null(await node.GetAsync("k"u8.ToArray(), ReadConsistency.Linearizable));
            }
        }
    }

    [Fact]
    public void The_mapping_names_another_leader_and_never_this_node()
    {
        var self = new IPEndPoint(IPAddress.Loopback, 7081);
        var other = new IPEndPoint(IPAddress.Loopback, 7082);
        var cause = new MemberUnavailableException(null!);

        Assert.True(Replication.LeadershipErrors.IsLeadershipError(new NotLeaderException()));
        Assert.True(Replication.LeadershipErrors.IsLeadershipError(new QuorumUnreachableException()));
        Assert.True(Replication.LeadershipErrors.IsLeadershipError(cause));
        Assert.False(Replication.LeadershipErrors.IsLeadershipError(new IOException()));
        Assert.False(Replication.LeadershipErrors.IsLeadershipError(new OperationCanceledException()));

        KvNotLeaderException named = Replication.LeadershipErrors.NotLeader(other, self, cause);
        Assert.Equal(other, named.LeaderEndPoint);
        Assert.Same(cause, named.InnerException);
        Assert.Null(Replication.LeadershipErrors.NotLeader(new IPEndPoint(IPAddress.Loopback, 7081), self, cause).LeaderEndPoint);
        Assert.Null(Replication.LeadershipErrors.NotLeader(null, self, null).LeaderEndPoint);
    }
}
