using System.Net;

namespace KvEngine.Replication;

/// <summary>
/// A write (or a leader-only operation, such as a linearizable read) reached a node that does not
/// lead the cluster, or that stopped leading while it ran. Retry it at <see cref="LeaderEndPoint"/>
/// when it names a node; when it is null no leader is ready (an election runs, a new leader has
/// not committed the first entry of its term, no majority is reachable): retry later. Every
/// leadership or membership exception of DotNext that a <see cref="ReplicatedKvNode"/> call meets
/// arrives as this one, with DotNext's as <see cref="Exception.InnerException"/>. Immutable.
/// </summary>
public sealed class KvNotLeaderException : KvException
{
    /// <summary>Creates the exception naming the current leader (null when none is known).</summary>
    /// <param name="leaderEndPoint">The leader's Raft endpoint, or null.</param>
    public KvNotLeaderException(EndPoint? leaderEndPoint)
        : this(leaderEndPoint, null)
    {
    }

    /// <summary>Creates the exception naming the current leader, caused by <paramref name="innerException"/>.</summary>
    /// <param name="leaderEndPoint">The leader's Raft endpoint, or null.</param>
    /// <param name="innerException">DotNext's exception, or null.</param>
    public KvNotLeaderException(EndPoint? leaderEndPoint, Exception? innerException)
        : base(leaderEndPoint is null
            ? "This node is not the leader and no leader is known (an election is running or no majority is reachable)."
            : $"This node is not the leader; the leader is {leaderEndPoint}.", innerException!)
    {
        LeaderEndPoint = leaderEndPoint;
    }

    /// <summary>The leader's Raft endpoint; null when no leader is known.</summary>
    public EndPoint? LeaderEndPoint { get; }
}
