namespace KvEngine.Stress;

/// <summary>
/// The key space [0, max_key) cut into one contiguous stripe per thread; a thread writes only its
/// own stripe (db_stress's per-key locks, made static), so a key's writes are ordered and the
/// expected state of a stripe is exact for its owner. Contiguous so a DeleteRange stays inside.
/// Stateless and thread-safe.
/// </summary>
internal static class KeyStripes
{
    public static long Lower(int thread, int threads, long maxKey) => thread * maxKey / threads;

    public static long Upper(int thread, int threads, long maxKey) => (thread + 1) * maxKey / threads;

    public static int Owner(long key, int threads, long maxKey)
    {
        int t = (int)Math.Min(threads - 1, key * threads / maxKey);
        while (t + 1 < threads && Lower(t + 1, threads, maxKey) <= key)
        {
            t++;
        }
        while (t > 0 && Lower(t, threads, maxKey) > key)
        {
            t--;
        }
        return t;
    }
}
