using System.Net;
using DotNext.Net.Cluster;
using DotNext.Net.Cluster.Consensus.Raft;

namespace KvEngine.Replication;

/// <summary>
/// Turns DotNext's leadership and membership exceptions into <see cref="KvNotLeaderException"/>,
/// so a caller (and the sample service's HTTP layer) handles one type: retry at
/// <see cref="KvNotLeaderException.LeaderEndPoint"/> when it names another node, later when it is
/// null. What DotNext 6.12 throws when a node stops leading or cannot reach the leader:
/// <list type="bullet">
/// <item><see cref="NotLeaderException"/>: a leader-only call on a node that is not (or no longer) the leader.</item>
/// <item><see cref="QuorumUnreachableException"/>: no leader is known (a read barrier on a node
/// that lost its leadership with no successor in sight, or a node whose peers are all unreachable).</item>
/// <item><see cref="MemberUnavailableException"/>: the leader this node knows did not answer (a
/// read barrier that began on a deposed leader, a paused process resumed after the others
/// elected a successor, and continued through DotNext's follower path).</item>
/// </list>
/// Both Raft exceptions derive from <see cref="LeaderOperationException"/>, which is matched as a
/// whole. Stateless and thread-safe.
/// </summary>
internal static class LeadershipErrors
{
    /// <summary>True when <paramref name="exception"/> says this node cannot act as the leader now.</summary>
    public static bool IsLeadershipError(Exception exception) =>
        exception is LeaderOperationException or MemberUnavailableException;

    /// <summary>
    /// The exception to throw for <paramref name="cause"/> (null: a check of ours, nothing was
    /// attempted). A leader that names itself (elected, its term's first entry not committed
    /// yet) is no place to send the caller: the exception then names no leader.
    /// </summary>
    public static KvNotLeaderException NotLeader(EndPoint? leader, EndPoint local, Exception? cause) =>
        new(leader is null || leader.Equals(local) ? null : leader, cause);
}
