namespace KvEngine.Memtable;

/// <summary>
/// Tuning of a <see cref="MemTable"/>. Immutable.
/// </summary>
/// <param name="ArenaBlockSize">Bytes per arena block (RocksDB sizes it write_buffer_size / 8).</param>
/// <param name="MaxHeight">Skiplist height cap (LevelDB and RocksDB: 12).</param>
/// <param name="Branching">Skiplist branching factor: 1 in Branching nodes reaches the next level (4).</param>
/// <param name="RandomSeed">Seed of the writer's PRNG that draws node heights.</param>
/// <param name="HashIndexBuckets">Buckets of the point entries' <see cref="MemTableHashIndex"/> (a power of two), or 0 for none.</param>
/// <param name="HugePages">Arena blocks backed by transparent huge pages (see <see cref="Arena"/>).</param>
/// <param name="Recycler">Spare blocks of the owner's retired memtables, used first (see <see cref="ArenaBlockRecycler"/>); null for none.</param>
internal sealed record MemTableOptions(
    int ArenaBlockSize = Arena.DefaultBlockSize,
    int MaxHeight = SkipList.DefaultMaxHeight,
    int Branching = SkipList.DefaultBranching,
    ulong RandomSeed = 0xdeadbeef,
    int HashIndexBuckets = 0,
    bool HugePages = false,
    ArenaBlockRecycler? Recycler = null)
{
    public static MemTableOptions Default { get; } = new();
}
