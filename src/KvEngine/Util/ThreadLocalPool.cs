using System.Runtime.CompilerServices;

namespace KvEngine.Util;

/// <summary>
/// A small per-thread stack of reusable objects of one type (at most <see cref="Capacity"/> per
/// thread) over a shared, lock-free overflow of <see cref="SharedCapacity"/> slots (more are left
/// to the GC). Used where an object has exactly one owner at a time and is recycled by that owner
/// when its life ends — a block-cache entry and a block freed on eviction are taken again by the
/// next insertion, which on a reading thread is usually the one that evicted them — so
/// steady-state cache misses create no managed objects. The shared slots carry objects between
/// threads whose returns and rents do not balance: a background thread that frees cached blocks
/// (a compaction's obsolete tables) spills what it cannot keep, and a reading thread whose stack
/// ran dry takes them back instead of allocating.
/// <para>
/// Thread-safe: each thread's stack is its own (no locks); a shared slot changes hands only by an
/// atomic exchange (an object is in one place at a time, so there is no ABA hazard). The caller
/// guarantees an object is returned once, after its last use, and resets it before reuse.
/// </para>
/// </summary>
internal static class ThreadLocalPool<T>
    where T : class
{
    /// <summary>Objects kept per thread.</summary>
    public const int Capacity = 64;

    /// <summary>Objects kept in the shared overflow.</summary>
    public const int SharedCapacity = 128;

    private static readonly T?[] s_shared = new T?[SharedCapacity];

    // Objects in the shared slots (approximate while a spill or take is under way): an empty
    // overflow costs a rent one load instead of a scan.
    private static int s_sharedCount;

    [ThreadStatic]
    private static T?[]? t_items;

    [ThreadStatic]
    private static int t_count;

    /// <summary>A pooled object (this thread's, else a shared one), or null when there is none.</summary>
    public static T? TryRent()
    {
        T?[]? items = t_items;
        int count = t_count;
        if (items == null || count == 0)
        {
            return TryRentShared();
        }
        count--;
        T? item = items[count];
        items[count] = null;
        t_count = count;
        return item;
    }

    /// <summary>Keeps <paramref name="item"/> for this thread's next <see cref="TryRent"/>, or in the shared overflow when the stack is full (dropped when that is too).</summary>
    public static void Return(T item)
    {
        T?[] items = t_items ??= new T?[Capacity];
        int count = t_count;
        if (count < items.Length)
        {
            items[count] = item;
            t_count = count + 1;
            return;
        }
        ReturnShared(item);
    }

    // Both scan the shared slots from the first, so spilled objects gather at the front and a rent
    // finds any that is there (unless another thread takes it first). Only when a thread's own
    // stack is empty or full: a rare path, a few dozen loads.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static T? TryRentShared()
    {
        if (Volatile.Read(ref s_sharedCount) <= 0)
        {
            return null;
        }
        T?[] shared = s_shared;
        for (int i = 0; i < shared.Length; i++)
        {
            if (Volatile.Read(ref shared[i]) != null && Interlocked.Exchange(ref shared[i], null) is { } item)
            {
                Interlocked.Decrement(ref s_sharedCount);
                return item;
            }
        }
        return null;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ReturnShared(T item)
    {
        T?[] shared = s_shared;
        for (int i = 0; i < shared.Length; i++)
        {
            if (Volatile.Read(ref shared[i]) == null && Interlocked.CompareExchange(ref shared[i], item, null) == null)
            {
                Interlocked.Increment(ref s_sharedCount);
                return;
            }
        }
    }
}
