using System.Net;

namespace KvEngine.Replication;

/// <summary>
/// A node's view of its cluster at one moment (<see cref="ReplicatedKvNode.GetStatus"/>): the
/// fields are read one after another, not atomically together. Immutable.
/// </summary>
/// <param name="Role">Leader, follower, or no leader known.</param>
/// <param name="Term">The node's current Raft term.</param>
/// <param name="CommitIndex">The highest log index the node knows committed.</param>
/// <param name="AppliedIndex">
/// The highest log index the node has applied, entries without writes (a new leader's no-op,
/// configuration entries) included: equal to <paramref name="CommitIndex"/> once caught up.
/// </param>
/// <param name="SnapshotIndex">The index its newest snapshot covers (0: none).</param>
/// <param name="LocalEndPoint">The node's Raft endpoint.</param>
/// <param name="LeaderEndPoint">The leader's Raft endpoint; null when none is known.</param>
public sealed record ReplicationStatus(
    ReplicaRole Role,
    long Term,
    long CommitIndex,
    long AppliedIndex,
    long SnapshotIndex,
    EndPoint LocalEndPoint,
    EndPoint? LeaderEndPoint);
