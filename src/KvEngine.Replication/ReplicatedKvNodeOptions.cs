using System.Net;
using Microsoft.Extensions.Logging;

namespace KvEngine.Replication;

/// <summary>
/// Configuration of a <see cref="ReplicatedKvNode"/>: its Raft address, the static member list and
/// where it keeps its state. Not thread-safe: configure it before starting the node.
/// </summary>
public sealed class ReplicatedKvNodeOptions
{
    /// <summary>The TCP endpoint this node's Raft transport listens on (and is known by). Required.</summary>
    public IPEndPoint? LocalEndPoint { get; set; }

    /// <summary>
    /// Every member's Raft endpoint, this node's included: the same list, in any order, on every
    /// node (static membership; 3 or 5 members tolerate 1 or 2 failures).
    /// </summary>
    public IList<IPEndPoint> Members { get; } = new List<IPEndPoint>();

    /// <summary>
    /// The node's directory: the database and its snapshots (see <see cref="KvStateMachine"/>)
    /// and the Raft log in its <c>raft-log</c> subdirectory. Required.
    /// </summary>
    public string? DataDirectory { get; set; }

    /// <summary>Options of the node's state machine (its database, snapshot interval).</summary>
    public KvStateMachineOptions StateMachine { get; set; } = new();

    /// <summary>Lower bound of the randomized election timeout, in milliseconds (default 150).</summary>
    public int LowerElectionTimeout { get; set; } = 150;

    /// <summary>Upper bound of the randomized election timeout, in milliseconds (default 300).</summary>
    public int UpperElectionTimeout { get; set; } = 300;

    /// <summary>
    /// Timeout of one Raft request to a peer; null: the lower election timeout (DotNext's default).
    /// </summary>
    public TimeSpan? RequestTimeout { get; set; }

    /// <summary>Logger factory for DotNext's and the node's events. Null: no logging.</summary>
    public ILoggerFactory? LoggerFactory { get; set; }
}
