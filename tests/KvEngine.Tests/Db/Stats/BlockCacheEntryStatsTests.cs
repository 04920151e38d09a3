using System.Globalization;
using System.Text;
using System.Text.RegularExpressions;
using KvEngine.Db.Stats;

namespace KvEngine.Tests.Db.Stats;

/// <summary>GetProperty("rocksdb.block-cache-entry-stats"): counts and bytes per role, partitions included.</summary>
public sealed partial class BlockCacheEntryStatsTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-cache-entry-stats-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Fact]
    public void CountsEveryRoleOfPartitionedTablesInTheCache()
    {
        using var cache = new KvBlockCache(8L << 20);
        var options = new KvOptions
        {
            WriteBufferSize = 128 << 10,
            IndexType = KvIndexType.TwoLevelIndexSearch,
            PartitionFilters = true,
            MetadataBlockSize = 512,
            CacheIndexAndFilterBlocks = true,
            BlockCache = cache,
            DisableAutoCompactions = true,
            Compression = KvCompressionType.None,
        };
        using KvDb db = KvDb.Open(Path.Combine(_dir.FullName, "db"), options);
        for (int t = 0; t < 3; t++)
        {
            for (int i = 0; i < 3000; i++)
            {
                db.Put(Encoding.ASCII.GetBytes($"key{t}-{i:D6}"), new byte[20]);
            }
            db.Flush();
        }
        for (int t = 0; t < 3; t++)
        {
            for (int i = 0; i < 3000; i += 7)
            {
                Assert.NotNull(db.Get(Encoding.ASCII.GetBytes($"key{t}-{i:D6}")));
                Assert.Null(db.Get(Encoding.ASCII.GetBytes($"key{t}-{i:D6}x")));
            }
        }

        string text = db.GetProperty("rocksdb.block-cache-entry-stats")!;
        Assert.StartsWith("Block cache LRUCache@", text, StringComparison.Ordinal);
        Assert.Contains(" capacity: 8.00 MB ", text, StringComparison.Ordinal);
        Assert.Contains("\nBlock cache entry stats(count,size,portion):", text, StringComparison.Ordinal);
        var roles = new Dictionary<string, (long Count, string Size)>();
        foreach (Match m in RoleEntry().Matches(text))
        {
            roles[m.Groups[1].Value] = (long.Parse(m.Groups[2].Value, CultureInfo.InvariantCulture), m.Groups[3].Value);
        }
        Assert.Equal(["DataBlock", "FilterBlock", "FilterMetaBlock", "IndexBlock"], roles.Keys.Order(StringComparer.Ordinal));
        // At least one top-level filter index per table (the flush's own check of a new table
        // leaves its entries in the cache, under that reader's cache id, until they age out).
        Assert.True(roles["FilterMetaBlock"].Count >= 3, $"{roles["FilterMetaBlock"].Count} top-level filter indexes");
        Assert.True(roles["IndexBlock"].Count > 3 * 2, "top-level indexes plus index partitions");
        Assert.True(roles["FilterBlock"].Count >= 3, "filter partitions");
        Assert.True(roles["DataBlock"].Count > 10);
    }

    [Theory]
    [InlineData(0, "0.00 KB")]
    [InlineData(80, "0.08 KB")]
    [InlineData(8L << 20, "8.00 MB")]
    [InlineData(3L << 30, "3.00 GB")]
    public void BytesPrintAsRocksDbPrintsThem(long bytes, string expected) => Assert.Equal(expected, BlockCacheEntryStats.HumanBytes(bytes));

    [GeneratedRegex(@" (\w+)\((\d+),([0-9.]+ [KMGT]B),[0-9.e+-]+%\)")]
    private static partial Regex RoleEntry();
}
