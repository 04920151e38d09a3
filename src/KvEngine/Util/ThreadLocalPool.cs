namespace KvEngine.Util;

/// <summary>
/// A small per-thread stack of reusable objects of one type (at most <see cref="Capacity"/> per
/// thread; more are left to the GC). Used where an object has exactly one owner at a time and is
/// recycled by that owner when its life ends — a block-cache entry and a block freed on eviction
/// are taken again by the next insertion, which on a reading thread is usually the one that
/// evicted them — so steady-state cache misses create no managed objects.
/// <para>
/// Thread-safe by construction: each thread sees only its own stack, so there are no locks and
/// no ABA hazards. The caller guarantees an object is returned once, after its last use, and
/// resets it before reuse.
/// </para>
/// </summary>
internal static class ThreadLocalPool<T>
    where T : class
{
    /// <summary>Objects kept per thread.</summary>
    public const int Capacity = 64;

    [ThreadStatic]
    private static T?[]? t_items;

    [ThreadStatic]
    private static int t_count;

    /// <summary>A pooled object of this thread, or null when there is none.</summary>
    public static T? TryRent()
    {
        T?[]? items = t_items;
        int count = t_count;
        if (items == null || count == 0)
        {
            return null;
        }
        count--;
        T? item = items[count];
        items[count] = null;
        t_count = count;
        return item;
    }

    /// <summary>Keeps <paramref name="item"/> for this thread's next <see cref="TryRent"/> (dropped when the stack is full).</summary>
    public static void Return(T item)
    {
        T?[] items = t_items ??= new T?[Capacity];
        int count = t_count;
        if (count < items.Length)
        {
            items[count] = item;
            t_count = count + 1;
        }
    }
}
