using KvEngine.Extensions.Caching;
using KvEngine.Replication;
using Microsoft.Extensions.Options;

namespace KvEngine.CacheService.Cluster;

/// <summary>
/// Runs this process's <see cref="ReplicatedKvNode"/> for the host's lifetime: started with the
/// host (before the server takes requests), stopped after the server drained. <see cref="Node"/> is
/// null before the start and after the stop (handlers answer 503 then). Thread-safe.
/// </summary>
internal sealed class ClusterNode(IOptions<ClusterOptions> options, ILoggerFactory loggerFactory, TimeProvider time) : IHostedService, IAsyncDisposable
{
    private volatile ReplicatedKvNode? _node;

    public ClusterOptions Options => options.Value;

    public ReplicatedKvNode? Node => _node;

    public async Task StartAsync(CancellationToken cancellationToken)
    {
        ClusterOptions o = options.Value;
        IReadOnlyList<System.Net.IPEndPoint> members = o.RaftEndPoints();
        var nodeOptions = new ReplicatedKvNodeOptions
        {
            LocalEndPoint = members[o.Self],
            DataDirectory = o.DataDirectory,
            LowerElectionTimeout = o.LowerElectionTimeout,
            UpperElectionTimeout = o.UpperElectionTimeout,
            LoggerFactory = loggerFactory,
            StateMachine = new KvStateMachineOptions
            {
                SnapshotInterval = o.SnapshotInterval,
                LoggerFactory = loggerFactory,
                // Compactions drop expired entries, as KvEngineCache does. Each node decides with its
                // own clock, so replicas may differ in expired entries they still hold, never in
                // what a read returns (an expired entry reads as a miss everywhere).
                DatabaseOptions = new KvOptions
                {
                    CompactionFilter = new ExpiredCacheEntryCompactionFilter(time),
                    Compression = KvCompressionType.Lz4,
                },
            },
        };
        foreach (System.Net.IPEndPoint member in members)
        {
            nodeOptions.Members.Add(member);
        }
        _node = await ReplicatedKvNode.StartAsync(nodeOptions, cancellationToken);
    }

    public async Task StopAsync(CancellationToken cancellationToken) => await DisposeAsync();

    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _node, null) is { } node)
        {
            await node.DisposeAsync();
        }
    }
}
