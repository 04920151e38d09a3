using KvEngine.Replication;
using Microsoft.Extensions.Diagnostics.HealthChecks;

namespace KvEngine.CacheService.Cluster;

/// <summary>
/// Healthy when the node runs, its database answers a read and a leader is known; degraded while
/// no leader is known (writes and linearizable reads are refused, stale reads work). Thread-safe.
/// </summary>
internal sealed class ClusterHealthCheck(ClusterNode cluster) : IHealthCheck
{
    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        if (cluster.Node is not { } node)
        {
            return Task.FromResult(HealthCheckResult.Unhealthy("The cluster node is not running."));
        }
        try
        {
            node.Read(0, static (db, _) => db.Get("__health__"u8));
        }
        catch (Exception e) when (e is KvException or IOException or ObjectDisposedException)
        {
            return Task.FromResult(HealthCheckResult.Unhealthy("The node's database failed a read.", e));
        }
        return Task.FromResult(node.GetStatus().Role == ReplicaRole.NoLeader
            ? HealthCheckResult.Degraded("No leader is known.")
            : HealthCheckResult.Healthy());
    }
}
