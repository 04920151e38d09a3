using System.Diagnostics;
using System.Runtime.CompilerServices;
using KvEngine.Format;

namespace KvEngine.Memtable;

/// <summary>
/// Concurrent inserts, RocksDB's InlineSkipList::InsertConcurrently (what
/// allow_concurrent_memtable_write uses): any number of threads may call
/// <see cref="AllocateEntryConcurrently"/> and <see cref="InsertConcurrently(uint)"/> at once, while
/// readers read as always.
/// <para>
/// Each inserting thread keeps a splice of its own (the nodes around its last insert, so runs of
/// sequential keys skip the search, as the single writer's splice does) and links its node bottom-up,
/// each level with a compare-and-swap on the predecessor's next pointer, which also publishes the
/// node (a full fence: the node's entry bytes and its own next pointer are visible first). A failed
/// swap means another node landed in the same gap: the level is searched again from the same
/// predecessor, which still precedes the key. Bottom-up linking keeps the readers' invariant (a
/// node seen at level i is linked at every level below). The height only grows, by a swap.
/// Heights come from a per-thread PRNG; nodes come from the arena under its lock.
/// </para>
/// <para>
/// A phase of concurrent inserts must not overlap single-writer inserts, and ends with
/// <see cref="EndConcurrentInserts"/> (one thread, after every concurrent insert returned), which
/// drops the single writer's splice: other threads' nodes may now sit inside its gaps.
/// </para>
/// </summary>
internal sealed unsafe partial class SkipList
{
    [ThreadStatic]
    private static ulong t_rngState;

    [ThreadStatic]
    private static ThreadSplice? t_splice;

    /// <summary>Concurrent writer: <see cref="AllocateEntry"/> for any number of threads at once.</summary>
    public byte* AllocateEntryConcurrently(int entrySize, out uint node)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(entrySize);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(entrySize, MemTableEntry.MaxEncodedSize);
        ref ulong state = ref t_rngState;
        if (state == 0)
        {
            state = 0x9E3779B97F4A7C15UL * (ulong)(Environment.CurrentManagedThreadId + 1);
        }
        int height = RandomHeight(ref state);
        byte* memory = _arena.AllocateAlignedConcurrently(NodeBytes(height) + entrySize, NodeAlignment(height), out uint memoryId);
        return StashHeight(memory, memoryId, height, out node);
    }

    /// <summary>
    /// Concurrent writer: links the node whose entry was written (from
    /// <see cref="AllocateEntryConcurrently"/>). False, and nothing linked, when an entry with an
    /// equal internal key is present.
    /// </summary>
    public bool InsertConcurrently(uint node) => InsertConcurrently(node, out _);

    /// <summary>
    /// <see cref="InsertConcurrently(uint)"/>; <paramref name="sharesUserKey"/> tells whether the
    /// entry's level-0 neighbour on either side had the same user key when it was linked (concurrent
    /// writers land a key's versions in any order). A version linked beside it at the same moment
    /// may go unseen: counts built on this flag may only run high.
    /// </summary>
    [SkipLocalsInit]
    public bool InsertConcurrently(uint nodeId, out bool sharesUserKey)
    {
        byte* node = At(nodeId);
        int height = (int)*(uint*)node;
        Debug.Assert(height >= 1 && height <= _maxHeight);
        ReadOnlySpan<byte> key = KeyOf(node);
        ulong prefix = KeyPrefix.OfInternalKey(key);

        int maxHeight = Volatile.Read(ref _height);
        while (height > maxHeight)
        {
            int seen = Interlocked.CompareExchange(ref _height, height, maxHeight);
            if (seen == maxHeight)
            {
                maxHeight = height;
                break;
            }
            maxHeight = seen;
        }

        ThreadSplice splice = t_splice ??= new ThreadSplice();
        fixed (uint* prev = splice.Prev, next = splice.Next)
        {
            if (splice.List != this)
            {
                splice.List = this;
                splice.Height = 0; // another list's nodes: start over
            }
            PositionSplice(key, prefix, prev, next, ref splice.Height, maxHeight);
            return LinkConcurrently(nodeId, node, height, key, prefix, prev, next, out sharesUserKey);
        }
    }

    /// <summary>Links the node at levels 0..height-1 between the splice's nodes, re-searching a level whose swap fails; leaves the splice around the node.</summary>
    private bool LinkConcurrently(uint nodeId, byte* node, int height, ReadOnlySpan<byte> key, ulong prefix, uint* prev, uint* next, out bool sharesUserKey)
    {
        sharesUserKey = false;
        for (int level = 0; level < height; level++)
        {
            while (true)
            {
                byte* before = At(prev[level]);
                if (level == 0)
                {
                    sharesUserKey = HasUserKeyOf(At(next[0]), _head, key, out bool duplicate);
                    if (duplicate)
                    {
                        return false; // only level 0 can tell, and nothing is linked yet
                    }
                    sharesUserKey |= HasUserKeyOf(before, _head, key, out _); // a predecessor sorts before: never the duplicate
                }
                SetNextNoBarrier(node, level, next[level]);
                if (level > 0)
                {
                    // The predecessor's bound, read after its link was seen at next[level]: if the
                    // swap below succeeds, the link never moved, so this bounds next[level] (header).
                    SetBoundNoBarrier(node, level, BoundOf(before, level));
                    LowerBound(before, level, prefix); // before the swap publishes the node
                }
                if (CompareExchangeNext(before, level, nodeId, next[level]))
                {
                    break;
                }
                FindSpliceForLevel(key, prefix, prev[level], 0, level, out prev[level], out next[level]);
            }
            prev[level] = nodeId;
        }
        return true;
    }

    /// <summary>Ends a phase of concurrent inserts (see the type's comment).</summary>
    public void EndConcurrentInserts() => _spliceHeight = 0;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool CompareExchangeNext(byte* node, int level, uint value, uint expected) =>
        Interlocked.CompareExchange(ref *LevelOf(node, level), value, expected) == expected;

    /// <summary>Lowers the level's bound to at most <paramref name="prefix"/> (an atomic minimum: concurrent writers only ever lower it).</summary>
    private static void LowerBound(byte* node, int level, ulong prefix)
    {
        ref ulong bound = ref *BoundSlot(node, level);
        ulong seen = Volatile.Read(ref bound);
        while (seen > prefix)
        {
            ulong found = Interlocked.CompareExchange(ref bound, prefix, seen);
            if (found == seen)
            {
                return;
            }
            seen = found;
        }
    }

    /// <summary>
    /// One thread's splice for concurrent inserts: the predecessors and successors around its last
    /// insert into <see cref="List"/> (levels 0..Height, level Height the (head, null) sentinel).
    /// Used only by its thread, and only for that list, whose nodes never move or die while it
    /// takes inserts.
    /// </summary>
    private sealed class ThreadSplice
    {
        public SkipList? List;
        public int Height;
        public readonly uint[] Prev = new uint[MaxHeightLimit + 1];
        public readonly uint[] Next = new uint[MaxHeightLimit + 1];
    }
}
