using System.Globalization;

namespace KvEngine.DbBench;

/// <summary>
/// Flags of the cachebench mode, spelled and defaulted as RocksDB 7.8's cache_bench
/// (num_shard_bits 6, lookup_insert_percent 87, insert_percent 2, lookup_percent 10,
/// erase_percent 1, skew 5, value_bytes 8192, ops_per_thread 2000000, resident_ratio 0.25,
/// populate_cache, lean). -cache_size (1 GiB here unless given) and -threads (16 unless given) are
/// the shared <see cref="BenchFlags"/> ones.
/// </summary>
internal sealed class CacheBenchFlags
{
    public int NumShardBits { get; private set; } = 6;
    public int LookupInsertPercent { get; private set; } = 87;
    public int InsertPercent { get; private set; } = 2;
    public int LookupPercent { get; private set; } = 10;
    public int ErasePercent { get; private set; } = 1;
    public int Skew { get; private set; } = 5;
    public int ValueBytes { get; private set; } = 8192;
    public long OpsPerThread { get; private set; } = 2_000_000;
    public double ResidentRatio { get; private set; } = 0.25;
    public bool PopulateCache { get; private set; } = true;
    public bool Lean { get; private set; }

    /// <summary>Takes a cachebench flag; false when <paramref name="name"/> is not one.</summary>
    public bool TrySet(string name, string v)
    {
        switch (name)
        {
            case "num_shard_bits": NumShardBits = (int)Number(name, v, 0, 19); return true;
            case "lookup_insert_percent": LookupInsertPercent = (int)Number(name, v, 0, 100); return true;
            case "insert_percent": InsertPercent = (int)Number(name, v, 0, 100); return true;
            case "lookup_percent": LookupPercent = (int)Number(name, v, 0, 100); return true;
            case "erase_percent": ErasePercent = (int)Number(name, v, 0, 100); return true;
            case "skew": Skew = (int)Number(name, v, 0, 100); return true;
            case "value_bytes": ValueBytes = (int)Number(name, v, 8, 1 << 26); return true;
            case "ops_per_thread": OpsPerThread = (long)Number(name, v, 1, 1e12); return true;
            case "resident_ratio": ResidentRatio = Number(name, v, 1e-6, 1); return true;
            case "populate_cache": PopulateCache = Flag(name, v); return true;
            case "lean": Lean = Flag(name, v); return true;
            default: return false;
        }
    }

    private static bool Flag(string name, string v) => v is "1" or "true" ? true : v is "0" or "false" ? false : throw Bad(name, v);

    private static double Number(string name, string v, double min, double max) =>
        double.TryParse(v, NumberStyles.Float, CultureInfo.InvariantCulture, out double x) && x >= min && x <= max
            ? x
            : throw Bad(name, v);

    private static ArgumentException Bad(string name, string v) => new($"Invalid flag '-{name}={v}'");
}
