namespace KvEngine.Replication;

/// <summary>How current a read on a <see cref="ReplicatedKvNode"/> must be.</summary>
public enum ReadConsistency
{
    /// <summary>
    /// Linearizable: the read sees every write acknowledged before it began. Served by the leader
    /// only (DotNext's strong read barrier: the leader confirms its leadership with a replication
    /// round, ReadIndex, and waits until it applied its last index); a follower throws
    /// <see cref="KvNotLeaderException"/> naming the leader (see
    /// <see cref="ReplicatedKvNode.ApplyReadBarrierAsync"/> for why); a leader that loses its
    /// leadership during the read, or a node that knows no leader (no majority answers), throws
    /// the same exception, naming no leader when none is ready.
    /// </summary>
    Linearizable,

    /// <summary>
    /// Stale: whatever the local node has applied, at once, without any network round; possibly
    /// behind the leader (but never a value that was not committed).
    /// </summary>
    Stale,
}
