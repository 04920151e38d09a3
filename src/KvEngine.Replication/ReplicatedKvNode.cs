using System.Net;
using DotNext.Net.Cluster.Consensus.Raft;
using DotNext.Net.Cluster.Consensus.Raft.Membership;
using DotNext.Net.Cluster.Consensus.Raft.StateMachine;
using KvEngine.Replication.Storage;

namespace KvEngine.Replication;

/// <summary>
/// One member of a KvEngine database replicated with Raft (DotNext.Net.Cluster over TCP): a
/// <see cref="KvStateMachine"/> driven by DotNext's <see cref="WriteAheadLog"/> and
/// <see cref="RaftCluster"/>. Writes go through the leader and return once a majority committed
/// them and the leader applied them; reads are linearizable or, when asked, stale and local.
/// </summary>
/// <remarks>
/// Start order (DotNext's requirement): the state machine is opened and restored, then the log is
/// constructed over it, then the cluster starts (it replays the committed log into the machine).
/// Thread-safety: every member may be called from any thread at once; writes are serialized by
/// DotNext's log. Dispose stops the Raft node, the log and the database, in that order.
/// </remarks>
public sealed class ReplicatedKvNode : IAsyncDisposable
{
    private readonly RaftCluster _cluster;
    private readonly WriteAheadLog _log;
    private Func<CancellationToken, ValueTask> _readBarrier;
    private int _disposed;

    private ReplicatedKvNode(RaftCluster cluster, WriteAheadLog log, KvStateMachine stateMachine, IPEndPoint localEndPoint)
    {
        _cluster = cluster;
        _log = log;
        StateMachine = stateMachine;
        LocalEndPoint = localEndPoint;
        _readBarrier = token => cluster.ApplyReadBarrierAsync(ReadBarrierType.Strong, token);
    }

    /// <summary>The node's state machine (its database, applied index and snapshots).</summary>
    public KvStateMachine StateMachine { get; }

    /// <summary>The node's Raft endpoint.</summary>
    public IPEndPoint LocalEndPoint { get; }

    /// <summary>True while this node leads and its leadership is established.</summary>
    public bool IsLeader => !_cluster.LeadershipToken.IsCancellationRequested;

    /// <summary>The leader's Raft endpoint as this node knows it; null when none is known.</summary>
    public EndPoint? LeaderEndPoint => _cluster.Leader?.EndPoint;

    /// <summary>The highest log index this node knows committed.</summary>
    public long CommitIndex => _log.LastCommittedEntryIndex;

    /// <summary>
    /// The highest log index this node has applied: every entry up to it is reflected in its
    /// database, the entries without writes included (the no-op a new leader appends to start its
    /// term, configuration entries), so it equals <see cref="CommitIndex"/> once the node has
    /// caught up. <see cref="KvStateMachine.AppliedIndex"/> counts only the entries the database
    /// stored (DotNext's log hands the state machine no entry without a payload): it can stay
    /// below this after an election.
    /// </summary>
    public long AppliedIndex => Math.Max(StateMachine.AppliedIndex, _log.LastAppliedIndex);

    /// <summary>For tests: replaces DotNext's strong read barrier, so that its exceptions can be injected.</summary>
    internal Func<CancellationToken, ValueTask> ReadBarrier
    {
        set => _readBarrier = value;
    }

    /// <summary>
    /// Opens the node's state in <see cref="ReplicatedKvNodeOptions.DataDirectory"/>, starts its
    /// Raft transport on <see cref="ReplicatedKvNodeOptions.LocalEndPoint"/> and joins the members.
    /// It returns once the node runs; a leader may not be elected yet (see <see cref="WaitForLeaderAsync"/>).
    /// </summary>
    /// <param name="options">The node's configuration.</param>
    /// <param name="cancellationToken">Cancels the start.</param>
    /// <returns>The running node; dispose it to stop.</returns>
    /// <exception cref="ArgumentException">A required option is missing or the member list lacks this node.</exception>
    public static async Task<ReplicatedKvNode> StartAsync(ReplicatedKvNodeOptions options, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(options);
        IPEndPoint local = options.LocalEndPoint ?? throw new ArgumentException("ReplicatedKvNodeOptions.LocalEndPoint is required.", nameof(options));
        string directory = options.DataDirectory is { Length: > 0 } d ? d : throw new ArgumentException("ReplicatedKvNodeOptions.DataDirectory is required.", nameof(options));
        if (!options.Members.Contains(local))
        {
            throw new ArgumentException($"ReplicatedKvNodeOptions.Members must list this node ({local}).", nameof(options));
        }
        if (options.LowerElectionTimeout < 1 || options.UpperElectionTimeout <= options.LowerElectionTimeout)
        {
            throw new ArgumentException("The election timeouts must satisfy 0 < LowerElectionTimeout < UpperElectionTimeout.", nameof(options));
        }

        // 1. The state machine, restored before the log reads its snapshot index.
        KvStateMachine stateMachine = KvStateMachine.Open(directory, options.StateMachine);
        WriteAheadLog? log = null;
        RaftCluster? cluster = null;
        try
        {
            // 2. The log over it (DotNext's, made durable before a follower acknowledges: Storage/DurableWriteAheadLog).
            log = new DurableWriteAheadLog(new WriteAheadLog.Options
            {
                Location = Path.Combine(Path.GetFullPath(directory), "raft-log"),
            }, stateMachine);

            // 3. The cluster: static membership, identical on every node (DotNext's in-memory
            //    configuration storage, which a null ConfigurationStorage stands for).
            var configuration = new RaftCluster.TcpConfiguration(local)
            {
                LowerElectionTimeout = options.LowerElectionTimeout,
                UpperElectionTimeout = options.UpperElectionTimeout,
                RequestTimeout = options.RequestTimeout ?? TimeSpan.FromMilliseconds(options.LowerElectionTimeout),
                ColdStart = false,
                ConfigurationStorage = null!,
                LoggerFactory = options.LoggerFactory ?? Microsoft.Extensions.Logging.Abstractions.NullLoggerFactory.Instance,
            };
            var builder = ((InMemoryClusterConfigurationStorage<EndPoint>)configuration.ConfigurationStorage).CreateInitialConfigurationBuilder();
            foreach (IPEndPoint member in options.Members)
            {
                builder.Add(member);
            }
            builder.Build();
            cluster = new RaftCluster(configuration) { AuditTrail = log };
            await cluster.StartAsync(cancellationToken).ConfigureAwait(false);
            return new ReplicatedKvNode(cluster, log, stateMachine, local);
        }
        catch
        {
            if (cluster != null)
            {
                await cluster.DisposeAsync().ConfigureAwait(false);
            }
            if (log != null)
            {
                await log.DisposeAsync().ConfigureAwait(false);
            }
            stateMachine.Dispose();
            throw;
        }
    }

    /// <summary>Waits until a leader is known (this node or another).</summary>
    /// <param name="timeout">How long to wait at most.</param>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <returns>The leader's Raft endpoint.</returns>
    /// <exception cref="TimeoutException">No leader within <paramref name="timeout"/>.</exception>
    public async Task<EndPoint> WaitForLeaderAsync(TimeSpan timeout, CancellationToken cancellationToken = default)
    {
        RaftClusterMember leader = await _cluster.WaitForLeaderAsync(timeout, cancellationToken).ConfigureAwait(false);
        return leader.EndPoint;
    }

    /// <summary>
    /// Replicates <paramref name="batch"/>: appended to the leader's log, committed by a majority
    /// and applied to the leader's database before the task completes. Only the leader accepts
    /// writes. A failed or canceled write may still commit (the outcome is unknown, as with any
    /// consensus system): make retried writes idempotent.
    /// </summary>
    /// <param name="batch">The writes (applied atomically on every node).</param>
    /// <param name="cancellationToken">Cancels the wait (not necessarily the write).</param>
    /// <exception cref="KvNotLeaderException">
    /// This node does not lead; the exception names the leader, or none when no leader is ready.
    /// Without an inner exception nothing was appended; with one (DotNext's), the leadership ended
    /// while the write was replicated, and it may still commit.
    /// </exception>
    /// <exception cref="KvException">Every node refused the batch (e.g. it names a column family they lack).</exception>
    public async ValueTask WriteAsync(WriteBatch batch, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(batch);
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        if (!IsLeader)
        {
            throw NotLeader(null);
        }
        var outcome = new ApplyOutcome();
        var entry = new BinaryLogEntry
        {
            Content = batch.Data.ToArray(),
            Term = ((IPersistentState)_log).Term,
            Context = outcome,
        };
        try
        {
            await _cluster.ReplicateAsync(entry, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (LeadershipErrors.IsLeadershipError(e))
        {
            // Appended or not, the leadership ended first: the write's outcome is unknown.
            throw NotLeader(e);
        }
        if (outcome.Error is { } error)
        {
            throw new KvException($"The replicated batch was refused by the state machine: {error.Message}", error);
        }
    }

    /// <summary>
    /// Waits until this node's database reflects every write acknowledged before the call. Only the
    /// leader serves it: DotNext's strong read barrier on a leader notes its last log index,
    /// confirms its leadership with a replication round that began after the call (ReadIndex) and
    /// waits until that index, which includes the no-op of its term, is applied. Read the database
    /// through <see cref="Read{TState, TResult}"/> after.
    /// </summary>
    /// <remarks>
    /// Followers do not serve linearizable reads: DotNext 6.12's barrier on a follower asks the
    /// leader for its commit index, which the leader returns without confirming its leadership or
    /// waiting for the no-op of its term to commit, so a leader just elected (or deposed without
    /// knowing it) can hand back an index older than a write already acknowledged. For the same
    /// reason a leader that loses its leadership while the barrier runs (DotNext then finishes it
    /// through its follower path) throws rather than answers. Use <see cref="ReadConsistency.Stale"/>
    /// on followers.
    /// </remarks>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <exception cref="KvNotLeaderException">
    /// This node does not lead, or stopped leading during the barrier (DotNext's
    /// <c>NotLeaderException</c>, <c>QuorumUnreachableException</c> or
    /// <c>MemberUnavailableException</c>, the inner exception); the exception names the leader,
    /// or no leader when none is ready (an election runs, no majority is reachable): retry later.
    /// </exception>
    public async ValueTask ApplyReadBarrierAsync(CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        // Cancelled until this node leads with the no-op of its term committed; then cancelled
        // when that leadership ends. Still live after the barrier: the barrier ran as a leader's.
        CancellationToken leadership = _cluster.LeadershipToken;
        if (leadership.IsCancellationRequested)
        {
            throw NotLeader(null);
        }
        try
        {
            await _readBarrier(cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (LeadershipErrors.IsLeadershipError(e))
        {
            throw NotLeader(e);
        }
        if (leadership.IsCancellationRequested)
        {
            throw NotLeader(null);
        }
    }

    /// <summary>Reads the value of <paramref name="key"/> (default column family) with the given consistency.</summary>
    /// <param name="key">The key.</param>
    /// <param name="consistency">Linearizable (the leader only: <see cref="ApplyReadBarrierAsync"/> first) or stale (any node: local, at once).</param>
    /// <param name="cancellationToken">Cancels the read barrier.</param>
    /// <returns>The value; null when the key has none.</returns>
    /// <exception cref="KvNotLeaderException">A linearizable read reached a node that does not lead, or that stopped leading during its barrier (see <see cref="ApplyReadBarrierAsync"/>).</exception>
    public async ValueTask<byte[]?> GetAsync(ReadOnlyMemory<byte> key, ReadConsistency consistency = ReadConsistency.Linearizable,
        CancellationToken cancellationToken = default)
    {
        if (consistency == ReadConsistency.Linearizable)
        {
            await ApplyReadBarrierAsync(cancellationToken).ConfigureAwait(false);
        }
        return StateMachine.Read(key, static (db, k) => db.Get(k.Span));
    }

    /// <summary>Runs <paramref name="read"/> against the node's database as it is now (stale unless after <see cref="ApplyReadBarrierAsync"/>).</summary>
    /// <param name="state">Passed to <paramref name="read"/>.</param>
    /// <param name="read">The read; it must not keep the database.</param>
    /// <returns>What <paramref name="read"/> returns.</returns>
    public TResult Read<TState, TResult>(TState state, Func<KvDb, TState, TResult> read) => StateMachine.Read(state, read);

    /// <summary>The node's role, term, commit and applied index, and the leader it knows.</summary>
    public ReplicationStatus GetStatus()
    {
        EndPoint? leader = LeaderEndPoint;
        ReplicaRole role = IsLeader ? ReplicaRole.Leader : leader is null ? ReplicaRole.NoLeader : ReplicaRole.Follower;
        return new ReplicationStatus(role, ((IPersistentState)_log).Term, CommitIndex, AppliedIndex, StateMachine.SnapshotIndex, LocalEndPoint, leader);
    }

    private KvNotLeaderException NotLeader(Exception? cause) => LeadershipErrors.NotLeader(LeaderEndPoint, LocalEndPoint, cause);

    /// <summary>Stops the Raft node, then closes its log and database.</summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }
        try
        {
            await _cluster.StopAsync(CancellationToken.None).ConfigureAwait(false);
        }
        finally
        {
            await _cluster.DisposeAsync().ConfigureAwait(false);
            await _log.DisposeAsync().ConfigureAwait(false);
            StateMachine.Dispose();
        }
    }
}
