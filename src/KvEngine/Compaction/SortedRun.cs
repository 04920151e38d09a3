using KvEngine.Versions;

namespace KvEngine.Compaction;

/// <summary>
/// One sorted run of universal compaction (RocksDB's UniversalCompactionBuilder::SortedRun): a
/// level-0 file (<see cref="File"/> set) or a whole non-empty level (<see cref="File"/> null).
/// <see cref="BeingCompacted"/>: the file, or any file of the level, is in a running compaction.
/// Immutable.
/// </summary>
internal readonly record struct SortedRun(int Level, FileMetaData? File, ulong Size, ulong CompensatedSize, bool BeingCompacted);
