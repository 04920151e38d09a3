using System.Globalization;

namespace KvEngine.DbBench;

/// <summary>
/// Flags of the filterbench mode, spelled and defaulted as RocksDB's util/filter_bench.cc
/// (average_keys_per_filter, vary_key_count_ratio, bits_per_key, working_mem_size_mb,
/// m_keys_total_max, m_queries, quick). key_size is filter_bench's (24), given as -filter_key_size
/// because db_bench's -key_size means something else. -optimize_filters_for_memory and -seed are
/// the shared <see cref="BenchFlags"/> ones.
/// </summary>
internal sealed class FilterBenchFlags
{
    public int AverageKeysPerFilter { get; private set; } = 10_000;
    public double VaryKeyCountRatio { get; private set; } = 0.4;
    public double BitsPerKey { get; private set; } = 10;
    public double WorkingMemSizeMb { get; private set; } = 200;
    public double MKeysTotalMax { get; private set; }
    public double MQueries { get; private set; } = 200;
    public bool Quick { get; private set; }
    public int KeySize { get; private set; } = 24;

    /// <summary>Takes a filterbench flag; false when <paramref name="name"/> is not one.</summary>
    public bool TrySet(string name, string v)
    {
        switch (name)
        {
            case "average_keys_per_filter": AverageKeysPerFilter = (int)Number(name, v, 1, int.MaxValue / 2); return true;
            case "vary_key_count_ratio": VaryKeyCountRatio = Number(name, v, 0, 1); return true;
            case "bits_per_key": BitsPerKey = Number(name, v, 1, 100); return true;
            case "working_mem_size_mb": WorkingMemSizeMb = Number(name, v, 0, 1 << 20); return true;
            case "m_keys_total_max": MKeysTotalMax = Number(name, v, 0, 1 << 20); return true;
            case "m_queries": MQueries = Number(name, v, 0, 1 << 20); return true;
            case "filter_key_size": KeySize = (int)Number(name, v, 12, 1000); return true;
            case "quick": Quick = v is "1" or "true" ? true : v is "0" or "false" ? false : throw Bad(name, v); return true;
            default: return false;
        }
    }

    private static double Number(string name, string v, double min, double max) =>
        double.TryParse(v, NumberStyles.Float, CultureInfo.InvariantCulture, out double x) && x >= min && x <= max
            ? x
            : throw Bad(name, v);

    private static ArgumentException Bad(string name, string v) => new($"Invalid flag '-{name}={v}'");
}
