using System.Collections.Concurrent;
using System.Diagnostics;
using DotNext.Net.Cluster.Consensus.Raft.StateMachine;
using KvEngine.Replication.Diagnostics;

namespace KvEngine.Replication.Tests.Diagnostics;

/// <summary>
/// A follower's Raft snapshot install is a span on the "KvEngine" activity source, with the
/// snapshot's index, term and size, beside the engine's open of the installed database.
/// </summary>
public sealed class ReplicationActivityTests
{
    private static KvStateMachineOptions Counting(long snapshotInterval = 10_000) => new()
    {
        DatabaseOptions = new KvOptions { MergeOperator = UInt64AddOperator.Instance },
        SnapshotInterval = snapshotInterval,
    };

    [Fact]
    public async Task A_snapshot_install_is_a_span_with_its_index_term_and_size()
    {
        using var dir = new TempDirectory();
        string targetDir = Path.GetFullPath(dir.Sub("target"));
        var spans = new ConcurrentQueue<Activity>();
        using var listener = new ActivityListener
        {
            ShouldListenTo = s => s.Name == KvEngineDiagnostics.ActivitySourceName,
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.AllDataAndRecorded,
            ActivityStopped = a =>
            {
                if (a.GetTagItem(KvEngineDiagnostics.DbNamespaceTag) is string ns && ns.StartsWith(targetDir, StringComparison.Ordinal))
                {
                    spans.Enqueue(a);
                }
            },
        };
        ActivitySource.AddActivityListener(listener);

        await using LocalReplica source = await LocalReplica.OpenAsync(dir.Sub("source"), Counting(snapshotInterval: 4));
        for (int i = 0; i < 4; i++)
        {
            await source.AppendAndApplyAsync(LocalReplica.Add("n", 2), LocalReplica.Put("k" + i, "v" + i));
        }
        var snapshot = (ISnapshot)((ISnapshotManager)source.Machine).Snapshot!;
        await using LocalReplica target = await LocalReplica.OpenAsync(targetDir, Counting());
        await target.Log.AppendAsync(snapshot, snapshot.Index);
        Assert.Equal(8, target.Machine.AppliedIndex);

        Activity install = Assert.Single(spans, a => a.OperationName == ReplicationActivities.SnapshotInstall);
        Assert.Equal(8L, install.GetTagItem("kvengine.raft.index"));
        Assert.Equal(snapshot.Term, install.GetTagItem("kvengine.raft.term"));
        Assert.True((long)install.GetTagItem("kvengine.raft.snapshot_bytes")! > 0);
        Assert.Equal(ActivityStatusCode.Unset, install.Status);
        // The installed database's open is a span of its own, inside the install.
        Assert.Contains(spans, a => a.OperationName == "kvengine.open" && a.ParentSpanId == install.SpanId);
    }
}
