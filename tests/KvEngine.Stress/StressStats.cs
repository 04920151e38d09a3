using System.Collections.Concurrent;
using System.Text;

namespace KvEngine.Stress;

/// <summary>
/// Counters by <see cref="StressCounter"/> and the verification failures found. Thread-safe
/// (interlocked counters, a concurrent queue).
/// </summary>
internal sealed class StressStats
{
    private readonly long[] _counts = new long[Enum.GetValues<StressCounter>().Length];

    public ConcurrentQueue<string> Failures { get; } = new();

    public void Add(StressCounter c, long n = 1) => Interlocked.Add(ref _counts[(int)c], n);

    public long this[StressCounter c] => Interlocked.Read(ref _counts[(int)c]);

    /// <summary>Operations run by the workers (reads and writes of every kind).</summary>
    public long Operations =>
        this[StressCounter.Put] + this[StressCounter.Delete] + this[StressCounter.WriteBatch] + this[StressCounter.DeleteRange]
        + this[StressCounter.Get] + this[StressCounter.GetSkippedConcurrent] + this[StressCounter.PrefixScan] + this[StressCounter.Iterate]
        + this[StressCounter.Flush] + this[StressCounter.CompactRange] + this[StressCounter.SnapshotTaken];

    public string Summary()
    {
        var sb = new StringBuilder();
        foreach (StressCounter c in Enum.GetValues<StressCounter>())
        {
            sb.Append(System.Globalization.CultureInfo.InvariantCulture, $"{c,-24}{this[c],14}\n");
        }
        sb.Append(System.Globalization.CultureInfo.InvariantCulture, $"{"Operations",-24}{Operations,14}\n");
        sb.Append(System.Globalization.CultureInfo.InvariantCulture, $"{"VerificationFailures",-24}{Failures.Count,14}\n");
        return sb.ToString();
    }
}
