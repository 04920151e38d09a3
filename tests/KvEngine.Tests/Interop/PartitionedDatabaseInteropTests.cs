using KvEngine.Tests.Table;

namespace KvEngine.Tests.Interop;

/// <summary>
/// A whole database of partitioned tables (coupled and decoupled filters, several metadata
/// sizes) written by KvEngine: ldb scans exactly its live data, sst_dump checks every table, and
/// KvEngine reads it back with every pinning configuration.
/// </summary>
public sealed class PartitionedDatabaseInteropTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-interop-partitioned-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Theory]
    [InlineData(true, 4096, KvCompressionType.Lz4)]
    [InlineData(false, 4096, KvCompressionType.Lz4)]
    [InlineData(true, 512, KvCompressionType.Zstd)]
    [InlineData(false, 300, KvCompressionType.None)]
    [InlineData(true, 1024, KvCompressionType.Snappy)]
    public void LdbAndSstDumpReadADatabaseOfPartitionedTables(bool decoupled, int metadataBlockSize, KvCompressionType compression)
    {
        string db = Path.Combine(_dir.FullName, "db");
        var options = new KvOptions
        {
            WriteBufferSize = 256 << 10,
            Compression = compression,
            BlockSize = 1024,
            IndexType = KvIndexType.TwoLevelIndexSearch,
            PartitionFilters = true,
            DecouplePartitionedFilters = decoupled,
            MetadataBlockSize = metadataBlockSize,
            DisableAutoCompactions = true,
        };
        var work = new InteropWorkload(seed: metadataBlockSize + (decoupled ? 1 : 0), poolSize: 20_000);
        using (KvDb kv = KvDb.Open(db, options))
        {
            for (int round = 0; round < 3; round++)
            {
                work.Apply(kv, 12_000);
                kv.Flush();
            }
            kv.CompactRange(null, null); // compaction output is partitioned too
            work.Apply(kv, 5_000);
            kv.Flush();
        }
        string[] tables = Directory.GetFiles(db, "*.sst");
        Assert.True(tables.Length >= 2, $"{tables.Length} tables");
        foreach (string table in tables)
        {
            RocksDbTools.AssertSstDumpCheckPasses(table);
            string props = RocksDbTools.Properties(table);
            Assert.Contains("rocksdb.block.based.table.index.type: 0x02000000", props, StringComparison.Ordinal);
            Assert.Matches(@"# index partitions: [1-9]", props);
        }
        RocksDbOracle.AssertSameContents(RocksDbOracle.ToList(work.Model), RocksDbOracle.Scan(db), "ldb scan");
        Assert.Equal(tables.Length, RocksDbOracle.AssertTablesVerify(db));

        // RocksDB's Gets go through our filter partitions: no false negative, absent keys absent.
        List<KeyValuePair<byte[], byte[]>> live = RocksDbOracle.ToList(work.Model);
        List<KeyValuePair<byte[], byte[]>> probes = live.Where((p, i) => i % 3 == 0 && p.Key.Length > 0).ToList();
        List<byte[]?> got = RocksDbOracle.Get(db, probes.ConvertAll(p => p.Key));
        Assert.True(got.Count == probes.Count, $"RocksDB found nothing for 0x{Convert.ToHexString(probes[got.Count - 1].Key)}");
        for (int i = 0; i < probes.Count; i++)
        {
            Assert.True(got[i]!.AsSpan().SequenceEqual(probes[i].Value), $"ldb get 0x{Convert.ToHexString(probes[i].Key)}");
        }
        for (int i = 0; i < live.Count; i += live.Count / 8)
        {
            byte[] absent = [.. live[i].Key, 0x7F];
            if (!work.Model.ContainsKey(absent))
            {
                Assert.Null(Assert.Single(RocksDbOracle.Get(db, [absent])));
            }
        }

        foreach (KvMetadataCacheOptions pinning in new[]
        {
            new KvMetadataCacheOptions(),
            new KvMetadataCacheOptions { TopLevelIndexPinning = KvPinningTier.None, PartitionPinning = KvPinningTier.None },
            new KvMetadataCacheOptions { PartitionPinning = KvPinningTier.All },
            new KvMetadataCacheOptions { PartitionPinning = KvPinningTier.FlushedAndSimilar },
        })
        {
            var stats = new KvStatistics();
            using var cache = new KvBlockCache(256 << 10);
            var read = new KvOptions
            {
                CreateIfMissing = false,
                CacheIndexAndFilterBlocks = true,
                MetadataCacheOptions = pinning,
                BlockCache = cache,
                Statistics = stats,
            };
            using KvDb kv = KvDb.Open(db, read);
            RocksDbOracle.AssertSameContents(RocksDbOracle.ToList(work.Model), RocksDbOracle.ForwardScan(kv), "KvEngine forward");
            RocksDbOracle.AssertSameContents(RocksDbOracle.ToList(work.Model), RocksDbOracle.BackwardScan(kv), "KvEngine backward");
            foreach (KeyValuePair<byte[], byte[]> p in work.Model)
            {
                Assert.Equal(p.Value, kv.Get(p.Key));
                Assert.Null(kv.Get([.. p.Key, 0xFF, 0x01]));
            }
            Assert.True(stats.GetTickerCount(Ticker.BloomFilterUseful) > 0, "the partitioned filters never ruled a key out");
        }
    }
}
