namespace KvEngine.Tests.Util;

/// <summary>
/// Steady-state allocation checks: runs a round once to warm up (lazy statics, grown buffers,
/// tiered JIT), then measures <see cref="GC.GetAllocatedBytesForCurrentThread"/> around several
/// more rounds and keeps the least, so a one-off runtime allocation in one round (a thread-pool
/// work item, an ArrayPool bucket refill under a parallel test run) does not fail the check
/// while an allocation in every round still does. Only the calling thread's allocations count.
/// The round delegate is created once by the caller, so invoking it allocates nothing.
/// </summary>
internal static class AllocationAssert
{
    /// <summary>The least bytes the calling thread allocated in one of <paramref name="rounds"/> runs of <paramref name="round"/>, after <paramref name="warmups"/> unmeasured runs.</summary>
    public static long MinAllocatedBytes(Action round, int rounds = 3, int warmups = 1) => Measure(round, rounds, warmups).Min();

    /// <summary>The bytes the calling thread allocated in each of <paramref name="rounds"/> runs of <paramref name="round"/>, after <paramref name="warmups"/> unmeasured runs.</summary>
    public static long[] Measure(Action round, int rounds = 3, int warmups = 1)
    {
        ArgumentNullException.ThrowIfNull(round);
        for (int i = 0; i < warmups; i++)
        {
            round();
        }
        var bytes = new long[rounds];
        for (int i = 0; i < rounds; i++)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            round();
            bytes[i] = GC.GetAllocatedBytesForCurrentThread() - before;
        }
        return bytes;
    }

    /// <summary>Asserts that <paramref name="round"/> allocates nothing in steady state (see <see cref="MinAllocatedBytes"/>).</summary>
    public static void Zero(Action round, string what, int rounds = 3, int warmups = 1)
    {
        long[] bytes = Measure(round, rounds, warmups);
        long min = bytes.Min();
        Assert.True(min == 0, $"{what}: {min} bytes allocated per round in steady state (least of {rounds} rounds; each round: {string.Join(", ", bytes)}; GC counts gen0/1/2 now: {GC.CollectionCount(0)}/{GC.CollectionCount(1)}/{GC.CollectionCount(2)}).");
    }
}
