using System.Diagnostics;
using System.Runtime.CompilerServices;
using KvEngine.Format;

namespace KvEngine.Memtable;

/// <summary>
/// Concurrent inserts, RocksDB's InlineSkipList::InsertConcurrently (what
/// allow_concurrent_memtable_write uses): any number of threads may call
/// <see cref="AllocateEntryConcurrently"/> and <see cref="InsertConcurrently"/> at once, while
/// readers read as always.
/// <para>
/// Each inserter searches with a splice of its own (on its stack) and links its node bottom-up,
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

    /// <summary>Concurrent writer: <see cref="AllocateEntry"/> for any number of threads at once.</summary>
    public byte* AllocateEntryConcurrently(int entrySize)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(entrySize);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(entrySize, MemTableEntry.MaxEncodedSize);
        ref ulong state = ref t_rngState;
        if (state == 0)
        {
            state = 0x9E3779B97F4A7C15UL * (ulong)(Environment.CurrentManagedThreadId + 1);
        }
        int height = RandomHeight(ref state);
        return StashHeight(_arena.AllocateAlignedConcurrently((height * s_pointerSize) + entrySize), height);
    }

    /// <summary>
    /// Concurrent writer: links the entry written at <paramref name="entry"/> (from
    /// <see cref="AllocateEntryConcurrently"/>). False, and nothing linked, when an entry with an
    /// equal internal key is present.
    /// </summary>
    [SkipLocalsInit]
    public bool InsertConcurrently(byte* entry)
    {
        byte* node = entry - s_pointerSize;
        int height = (int)*(nint*)node;
        Debug.Assert(height >= 1 && height <= _maxHeight);
        ReadOnlySpan<byte> key = MemTableEntry.InternalKey(entry);

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

        byte** prev = stackalloc byte*[maxHeight + 1];
        byte** next = stackalloc byte*[maxHeight + 1];
        prev[maxHeight] = _head;
        next[maxHeight] = null;
        for (int level = maxHeight - 1; level >= 0; level--)
        {
            FindSpliceForLevel(key, prev[level + 1], next[level + 1], level, out prev[level], out next[level]);
        }

        for (int level = 0; level < height; level++)
        {
            while (true)
            {
                if (level == 0 && next[0] != null && InternalKeyComparer.Compare(KeyOf(next[0]), key) == 0)
                {
                    return false; // only level 0 can tell, and nothing is linked yet
                }
                SetNextNoBarrier(node, level, next[level]);
                if (CompareExchangeNext(prev[level], level, node, next[level]))
                {
                    break;
                }
                FindSpliceForLevel(key, prev[level], null, level, out prev[level], out next[level]);
            }
        }
        return true;
    }

    /// <summary>Ends a phase of concurrent inserts (see the type's comment).</summary>
    public void EndConcurrentInserts() => _spliceHeight = 0;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool CompareExchangeNext(byte* node, int level, byte* value, byte* expected) =>
        Interlocked.CompareExchange(ref *((nint*)node - level), (nint)value, (nint)expected) == (nint)expected;
}
