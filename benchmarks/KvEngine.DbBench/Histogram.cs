using System.Globalization;
using System.Text;

namespace KvEngine.DbBench;

/// <summary>
/// Latency histogram in microseconds with RocksDB's bucket limits (1, 2, ... growing by ~1.5x),
/// reporting count, average and percentiles the way db_bench's -histogram=1 does. One per thread,
/// merged at the end.
/// </summary>
internal sealed class Histogram
{
    private static readonly double[] s_limits = BuildLimits();
    private readonly long[] _buckets = new long[s_limits.Length];
    private long _count;
    private double _sum;
    private double _min = double.MaxValue;
    private double _max;

    public void Add(double micros)
    {
        int lo = 0;
        int hi = s_limits.Length - 1;
        while (lo < hi)
        {
            int mid = (lo + hi) >>> 1;
            if (s_limits[mid] > micros)
            {
                hi = mid;
            }
            else
            {
                lo = mid + 1;
            }
        }
        _buckets[lo]++;
        _count++;
        _sum += micros;
        _min = Math.Min(_min, micros);
        _max = Math.Max(_max, micros);
    }

    public void Merge(Histogram other)
    {
        for (int i = 0; i < _buckets.Length; i++)
        {
            _buckets[i] += other._buckets[i];
        }
        _count += other._count;
        _sum += other._sum;
        _min = Math.Min(_min, other._min);
        _max = Math.Max(_max, other._max);
    }

    public string Format()
    {
        var c = CultureInfo.InvariantCulture;
        var sb = new StringBuilder();
        double avg = _count == 0 ? 0 : _sum / _count;
        sb.Append(c, $"Count: {_count} Average: {avg:F4}\n");
        sb.Append(c, $"Min: {(_count == 0 ? 0 : _min):F4}  Median: {Percentile(50):F4}  Max: {_max:F4}\n");
        sb.Append(c, $"Percentiles: P50: {Percentile(50):F2} P75: {Percentile(75):F2} P99: {Percentile(99):F2} P99.9: {Percentile(99.9):F2} P99.99: {Percentile(99.99):F2}\n");
        return sb.ToString();
    }

    public double Percentile(double p)
    {
        if (_count == 0)
        {
            return 0;
        }
        double threshold = _count * (p / 100.0);
        long cumulative = 0;
        for (int b = 0; b < _buckets.Length; b++)
        {
            cumulative += _buckets[b];
            if (cumulative >= threshold)
            {
                double left = b == 0 ? 0 : s_limits[b - 1];
                double right = s_limits[b];
                long before = cumulative - _buckets[b];
                double pos = _buckets[b] == 0 ? 0 : (threshold - before) / _buckets[b];
                double r = left + (right - left) * pos;
                return Math.Clamp(r, _min, _max);
            }
        }
        return _max;
    }

    private static double[] BuildLimits()
    {
        var limits = new List<double> { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 18, 20, 25, 30, 35, 40, 45, 50, 60, 70, 80, 90, 100 };
        double v = 100;
        while (v < 1e10)
        {
            v = Math.Round(v * 1.5);
            limits.Add(v);
        }
        limits.Add(double.MaxValue);
        return limits.ToArray();
    }
}
