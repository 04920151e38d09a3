using Microsoft.Extensions.Logging;

namespace KvEngine.Replication;

/// <summary>
/// Configuration of a <see cref="KvStateMachine"/>. Not thread-safe: configure it before opening.
/// </summary>
public sealed class KvStateMachineOptions
{
    /// <summary>
    /// Options of the node's KvEngine database. The state machine sets
    /// <see cref="KvOptions.CreateIfMissing"/> and <see cref="KvOptions.CreateMissingColumnFamilies"/>
    /// on it. Its column-family settings (merge operator, compaction filter...) are the default
    /// family's. Null: KvEngine's defaults.
    /// </summary>
    public KvOptions? DatabaseOptions { get; set; }

    /// <summary>
    /// Column families the replicated batches may write besides the default one, created in this
    /// order when the database is created. Replicated batches name families by id, so every node
    /// must list the same families in the same order. Do not list "default" (configure it through
    /// <see cref="DatabaseOptions"/>) nor "kvengine_raft" (the applied index's family, created
    /// right after the default one). Null or empty: the default family only.
    /// </summary>
    public IReadOnlyList<ColumnFamilyDescriptor>? ColumnFamilies { get; set; }

    /// <summary>
    /// A snapshot (a checkpoint of the database) is taken once this many entries were applied
    /// since the last one; the Raft log before it is then compacted. Default 10,000; at least 1.
    /// </summary>
    public long SnapshotInterval { get; set; } = 10_000;

    /// <summary>
    /// Sync KvEngine's WAL on every applied entry (<see cref="WriteOptions.Sync"/>). False (the
    /// default) survives a process crash; the Raft log still holds every committed entry after the
    /// last snapshot, so a machine crash loses nothing either: the entries are applied again.
    /// </summary>
    public bool SyncWrites { get; set; }

    /// <summary>Logger factory for the state machine's events. Null: no logging.</summary>
    public ILoggerFactory? LoggerFactory { get; set; }
}
