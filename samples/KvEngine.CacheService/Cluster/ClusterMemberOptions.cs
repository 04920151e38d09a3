namespace KvEngine.CacheService.Cluster;

/// <summary>One member of the cluster: where its Raft transport and its HTTP API listen. Bound once at start.</summary>
public sealed class ClusterMemberOptions
{
    /// <summary>The Raft TCP endpoint, "127.0.0.1:7001".</summary>
    public string? Raft { get; set; }

    /// <summary>The HTTP base URL clients are redirected to, "http://127.0.0.1:5081".</summary>
    public string? Http { get; set; }
}
