using System.Globalization;
using System.Text;
using KvEngine.Cache;

namespace KvEngine.Db.Stats;

/// <summary>
/// RocksDB's "rocksdb.block-cache-entry-stats" text (InternalStats::CacheEntryRoleStats::ToString):
/// a header line about the cache, then count, charged bytes and share of capacity per entry role
/// that has entries, under RocksDB's role names (DataBlock, FilterBlock, FilterMetaBlock,
/// IndexBlock, Misc). Collected at each call. Stateless.
/// </summary>
internal static class BlockCacheEntryStats
{
    /// <summary>RocksDB's kCacheEntryRoleToCamelString for each <see cref="CacheEntryRole"/>, in RocksDB's role order.</summary>
    private static readonly (CacheEntryRole Role, string Name)[] s_roles =
    [
        (CacheEntryRole.Data, "DataBlock"),
        (CacheEntryRole.Filter, "FilterBlock"),
        (CacheEntryRole.FilterMeta, "FilterMetaBlock"),
        (CacheEntryRole.Index, "IndexBlock"),
        (CacheEntryRole.Other, "Misc"),
    ];

    public static string Format(LruCache cache)
    {
        Span<long> counts = stackalloc long[CacheEntryRoles.Count];
        Span<long> charges = stackalloc long[CacheEntryRoles.Count];
        long start = System.Diagnostics.Stopwatch.GetTimestamp();
        cache.CollectRoleStats(counts, charges);
        double secs = System.Diagnostics.Stopwatch.GetElapsedTime(start).TotalSeconds;
        long entries = 0;
        foreach (long n in counts)
        {
            entries += n;
        }
        CultureInfo c = CultureInfo.InvariantCulture;
        var sb = new StringBuilder();
        sb.Append(c, $"Block cache LRUCache@kvengine capacity: {HumanBytes(cache.Capacity)} usage: {HumanBytes(cache.Usage)} ");
        sb.Append(c, $"table_size: {entries} occupancy: {entries} collections: 1 last_copies: 0 last_secs: {secs.ToString("G6", c)} secs_since: 0\n");
        sb.Append("Block cache entry stats(count,size,portion):");
        foreach ((CacheEntryRole role, string name) in s_roles)
        {
            int i = (int)role;
            if (counts[i] > 0)
            {
                double portion = cache.Capacity > 0 ? 100.0 * charges[i] / cache.Capacity : 0;
                sb.Append(c, $" {name}({counts[i]},{HumanBytes(charges[i])},{portion.ToString("G6", c)}%)");
            }
        }
        sb.Append('\n');
        return sb.ToString();
    }

    /// <summary>RocksDB's BytesToHumanString: KB at least, two decimals ("8.00 MB").</summary>
    public static string HumanBytes(long bytes)
    {
        ReadOnlySpan<string> units = ["KB", "MB", "GB", "TB"];
        double size = bytes / 1024.0;
        int unit = 0;
        while (unit < 3 && size >= 1024)
        {
            size /= 1024;
            unit++;
        }
        return string.Create(CultureInfo.InvariantCulture, $"{size:F2} {units[unit]}");
    }
}
