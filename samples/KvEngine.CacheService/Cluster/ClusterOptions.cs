using System.Globalization;
using System.Net;

namespace KvEngine.CacheService.Cluster;

/// <summary>
/// The "Cluster" section, read when the service starts with <c>--cluster</c>: the static member
/// list (the same on every node), which member this process is, and where it keeps its state.
/// Not thread-safe: bound and validated once at start.
/// </summary>
public sealed class ClusterOptions
{
    /// <summary>Every member, this one included (3 or 5 for a cluster that tolerates 1 or 2 failures).</summary>
    public List<ClusterMemberOptions> Members { get; set; } = [];

    /// <summary>This process's index in <see cref="Members"/>.</summary>
    public int Self { get; set; } = -1;

    /// <summary>The node's directory (database, snapshots, Raft log). Required.</summary>
    public string? DataDirectory { get; set; }

    /// <summary>Entries applied between two snapshots (checkpoints); the Raft log is compacted after each.</summary>
    public long SnapshotInterval { get; set; } = 10_000;

    /// <summary>Lower bound of the election timeout, in milliseconds.</summary>
    public int LowerElectionTimeout { get; set; } = 150;

    /// <summary>Upper bound of the election timeout, in milliseconds.</summary>
    public int UpperElectionTimeout { get; set; } = 300;

    /// <summary>The members' Raft endpoints, parsed; throws <see cref="InvalidOperationException"/> naming a bad one.</summary>
    public IReadOnlyList<IPEndPoint> RaftEndPoints()
    {
        if (Members.Count == 0)
        {
            throw new InvalidOperationException("Cluster:Members is empty: list every member's Raft endpoint and HTTP URL.");
        }
        var endPoints = new List<IPEndPoint>(Members.Count);
        for (int i = 0; i < Members.Count; i++)
        {
            if (!IPEndPoint.TryParse(Members[i].Raft ?? "", out IPEndPoint? endPoint) || endPoint.Port == 0)
            {
                throw new InvalidOperationException(string.Create(CultureInfo.InvariantCulture,
                    $"Cluster:Members:{i}:Raft must be an IP endpoint such as 127.0.0.1:7001, not '{Members[i].Raft}'."));
            }
            if (!Uri.TryCreate(Members[i].Http, UriKind.Absolute, out _))
            {
                throw new InvalidOperationException(string.Create(CultureInfo.InvariantCulture,
                    $"Cluster:Members:{i}:Http must be an absolute URL such as http://127.0.0.1:5081, not '{Members[i].Http}'."));
            }
            endPoints.Add(endPoint);
        }
        if (Self < 0 || Self >= Members.Count)
        {
            throw new InvalidOperationException(string.Create(CultureInfo.InvariantCulture,
                $"Cluster:Self must index Cluster:Members (0..{Members.Count - 1}), not {Self}."));
        }
        if (string.IsNullOrEmpty(DataDirectory))
        {
            throw new InvalidOperationException("Cluster:DataDirectory is required.");
        }
        return endPoints;
    }

    /// <summary>The HTTP URL of the member whose Raft endpoint is <paramref name="raft"/>; null when none is.</summary>
    public Uri? HttpUrlOf(EndPoint? raft)
    {
        if (raft is not IPEndPoint ip)
        {
            return null;
        }
        foreach (ClusterMemberOptions member in Members)
        {
            if (IPEndPoint.TryParse(member.Raft ?? "", out IPEndPoint? candidate) && candidate.Equals(ip))
            {
                return new Uri(member.Http!);
            }
        }
        return null;
    }
}
