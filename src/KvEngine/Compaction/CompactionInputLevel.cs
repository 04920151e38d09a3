using KvEngine.Versions;

namespace KvEngine.Compaction;

/// <summary>
/// The input files a compaction takes from one level between its start and output levels
/// (universal compaction merges several sorted runs, each a level). Files in key order.
/// Immutable once built.
/// </summary>
internal readonly record struct CompactionInputLevel(int Level, FileMetaData[] Files);
