namespace KvEngine.CacheService.Cluster;

/// <summary>The JSON body of GET /cluster. Immutable.</summary>
/// <param name="Role">"Leader", "Follower" or "NoLeader".</param>
/// <param name="Term">The node's current Raft term.</param>
/// <param name="CommitIndex">The highest log index it knows committed.</param>
/// <param name="AppliedIndex">The highest log index it applied, a new leader's no-op included: equal to CommitIndex once caught up.</param>
/// <param name="SnapshotIndex">The index its newest snapshot covers (0: none).</param>
/// <param name="Self">Its Raft endpoint.</param>
/// <param name="Leader">The leader's Raft endpoint; null when none is known.</param>
/// <param name="LeaderUrl">The leader's HTTP URL; null when none is known.</param>
public sealed record ClusterStatusResponse(
    string Role, long Term, long CommitIndex, long AppliedIndex, long SnapshotIndex, string Self, string? Leader, string? LeaderUrl);
