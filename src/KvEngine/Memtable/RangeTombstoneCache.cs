using KvEngine.RangeDel;

namespace KvEngine.Memtable;

/// <summary>
/// The fragmented range-tombstone list of one memtable as of one set of tombstones (RocksDB PR
/// 10547's cached list). The memtable swaps in a new, empty cache after every DeleteRange insert; the
/// first reader that finds it empty builds the list from the tombstone skiplist and publishes it,
/// later readers take it as is.
/// <para>
/// Why a reader holding an older cache stays correct: the cache is swapped after the tombstone is
/// in the skiplist and before its sequence number is published, and readers take their read
/// sequence before they look at the cache. A reader that can see the new tombstone's sequence
/// therefore finds the new cache (whose build sees the tombstone); one that finds an older cache
/// reads at a sequence below the new tombstone, which it must not see anyway.
/// </para>
/// Thread-safety: <see cref="Get"/> is lock-free once built; builders serialize on the cache
/// itself (others wait for the one build, as in the PR).
/// </summary>
internal sealed class RangeTombstoneCache
{
    private readonly object _buildGate = new();
    private FragmentedRangeTombstoneList? _list;

    /// <summary>The list, built on first use from <paramref name="mem"/>'s tombstones.</summary>
    public FragmentedRangeTombstoneList Get(MemTable mem)
    {
        FragmentedRangeTombstoneList? list = Volatile.Read(ref _list);
        return list ?? Build(mem);
    }

    private FragmentedRangeTombstoneList Build(MemTable mem)
    {
        lock (_buildGate)
        {
            FragmentedRangeTombstoneList? list = _list;
            if (list == null)
            {
                using Iterators.InternalIterator? it = mem.NewRangeTombstoneIterator();
                list = it == null ? FragmentedRangeTombstoneList.Empty : FragmentedRangeTombstoneList.Build(it);
                Volatile.Write(ref _list, list);
            }
            return list;
        }
    }
}
