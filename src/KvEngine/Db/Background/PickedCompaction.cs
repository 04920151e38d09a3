using KvEngine.Db.State;

namespace KvEngine.Db.Background;

/// <summary>
/// An automatic compaction <see cref="CompactionRunner.TryPickAutomatic"/> chose: registered with
/// <see cref="Family"/>'s picker (its files are marked as compacting), with the version it was
/// picked from pinned until it has run. Immutable.
/// </summary>
internal readonly record struct PickedCompaction(ColumnFamilyData Family, Compaction.Compaction Compaction, Versions.Version Pinned);
