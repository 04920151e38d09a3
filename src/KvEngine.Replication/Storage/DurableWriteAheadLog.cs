using DotNext.IO.Log;
using DotNext.Net.Cluster.Consensus.Raft;
using DotNext.Net.Cluster.Consensus.Raft.StateMachine;

namespace KvEngine.Replication.Storage;

/// <summary>
/// DotNext's <see cref="WriteAheadLog"/> with Raft's persistence rule on the follower path: entries
/// a leader sends are on stable storage, and recorded in the log's checkpoint, before the append
/// that received them returns, so before the follower acknowledges them.
/// <para>
/// Why: in DotNext 6.12 a follower's AppendEntries handler appends the entries into the
/// memory-mapped log and replies with the new last index at once; only the log's background
/// flusher later msyncs the pages and writes the checkpoint (commit index, last index). On open,
/// the log trusts the checkpoint alone (last index = max(checkpoint's last index, its commit
/// index)), so a follower killed between its reply and the flusher's next pass comes back without
/// entries it acknowledged, although their bytes are still in the page cache. A leader counts that
/// reply toward a majority, commits and answers the client; if the leader then dies too, the
/// forgetful follower and the third node elect a leader whose log lacks the acknowledged write
/// (seen once as a lost register write in the cluster fault test: docs/design.md, "Replication").
/// The leader's own copy was already safe: DotNext's commit waits for the flush of the committed
/// range.
/// </para>
/// <para>
/// How: the interface method DotNext's AppendEntries handler calls
/// (<see cref="IAuditTrail{TEntry}.AppendAsync{TEntryImpl}(ILogEntryProducer{TEntryImpl}, long, bool, CancellationToken)"/>)
/// is re-implemented to append, then wait for <see cref="WriteAheadLog.FlushAsync(CancellationToken)"/>
/// (msync of the written pages and a checkpoint covering them). Every other member is DotNext's.
/// Cost: one flush per AppendEntries batch on a follower, which Raft requires; entries arriving
/// while a flush runs are flushed together by the next pass.
/// </para>
/// Thread-safety: as <see cref="WriteAheadLog"/>.
/// </summary>
internal sealed class DurableWriteAheadLog : WriteAheadLog, IAuditTrail<IRaftLogEntry>
{
    public DurableWriteAheadLog(Options configuration, IStateMachine stateMachine)
        : base(configuration, stateMachine)
    {
    }

    /// <summary>Appends (or overwrites from <paramref name="startIndex"/>) and returns once the entries are durable and checkpointed.</summary>
    async ValueTask IAuditTrail<IRaftLogEntry>.AppendAsync<TEntry>(ILogEntryProducer<TEntry> entries, long startIndex, bool skipCommitted, CancellationToken token)
    {
        await AppendAsync(entries, startIndex, skipCommitted, token).ConfigureAwait(false);
        await FlushAsync(token).ConfigureAwait(false);
    }
}
