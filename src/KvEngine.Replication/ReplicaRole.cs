namespace KvEngine.Replication;

/// <summary>The part a <see cref="ReplicatedKvNode"/> plays in its cluster right now.</summary>
public enum ReplicaRole
{
    /// <summary>No leader is known: an election is running, or no majority is reachable.</summary>
    NoLeader,

    /// <summary>Another node leads; writes must go there.</summary>
    Follower,

    /// <summary>This node leads (and its leadership is confirmed by a committed entry of its term).</summary>
    Leader,
}
