using System.Buffers.Binary;
using KvEngine.Tests.Table;

namespace KvEngine.Tests.Interop;

/// <summary>
/// Prefix filters both ways with RocksDB 7.8: a database db_bench writes with -prefix_size=8
/// -whole_key_filtering=0 (full and partitioned filters) opens with
/// <see cref="KvOptions.LoadLatest(string)"/> and answers Gets and prefix seeks as ldb's scan says,
/// through its prefix filters; and the prefix-only tables KvEngine writes are read by sst_dump and
/// by ldb's Gets under the OPTIONS file's prefix extractor.
/// </summary>
public sealed class PrefixInteropTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-interop-prefix-");

    public void Dispose() => _dir.Delete(recursive: true);

    // db_bench's keys with -keys_per_prefix: 8 bytes of prefix number (big-endian), then the key number.
    private static byte[] AbsentPrefixKey(ulong prefixNumber)
    {
        var key = new byte[16];
        BinaryPrimitives.WriteUInt64BigEndian(key, prefixNumber);
        return key;
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void KvEngineReadsRocksDbPrefixFilteredTables(bool partitioned)
    {
        string db = Path.Combine(_dir.FullName, "rocks");
        var args = new List<string>
        {
            "-benchmarks=fillrandom", "-num=20000", "-prefix_size=8", "-keys_per_prefix=10", "-whole_key_filtering=0",
            "-bloom_bits=10", $"-db={db}", "-compression_type=none", "-write_buffer_size=262144", "-target_file_size_base=262144",
            "-value_size=50", "-seed=7",
        };
        if (partitioned)
        {
            args.Add("-partition_index_and_filters=1");
        }
        (int rc, string stdout, string stderr) = RocksDbTools.Run("db_bench", args, 120_000);
        Assert.True(rc == 0, $"db_bench exit {rc}: {stdout} {stderr}");
        List<KeyValuePair<byte[], byte[]>> expected = RocksDbOracle.Scan(db);
        Assert.True(expected.Count > 10_000, $"{expected.Count} keys");

        KvOptions options = KvOptions.LoadLatest(db);
        Assert.Equal("rocksdb.FixedPrefix.8", options.PrefixExtractor?.Name);
        Assert.False(options.WholeKeyFiltering);
        Assert.Equal(partitioned, options.PartitionFilters);
        var stats = new KvStatistics();
        options.Statistics = stats;
        options.DisableAutoCompactions = true; // read RocksDB's own tables
        using KvDb kv = KvDb.Open(db, options);
        foreach (KeyValuePair<byte[], byte[]> p in expected)
        {
            Assert.Equal(p.Value, kv.Get(p.Key));
        }
        for (ulong prefix = 1_000_000; prefix < 1_000_500; prefix++)
        {
            Assert.Null(kv.Get(AbsentPrefixKey(prefix)));
        }
        Assert.True(stats.GetTickerCount(Ticker.BloomFilterPrefixUseful) > 400, "RocksDB's prefix filters ruled out too few absent prefixes");

        // Prefix seeks: each written prefix yields exactly its keys; absent prefixes nothing.
        var byPrefix = expected.GroupBy(p => BinaryPrimitives.ReadUInt64BigEndian(p.Key)).ToList();
        long checkedBefore = stats.GetTickerCount(Ticker.BloomFilterPrefixChecked);
        using KvIterator it = kv.NewIterator(new ReadOptions { PrefixSameAsStart = true });
        foreach (IGrouping<ulong, KeyValuePair<byte[], byte[]>> group in byPrefix.Where((_, i) => i % 7 == 0))
        {
            var got = new List<KeyValuePair<byte[], byte[]>>();
            for (it.Seek(AbsentPrefixKey(group.Key).AsSpan(0, 8)); it.Valid; it.Next())
            {
                got.Add(new(it.Key.ToArray(), it.Value.ToArray()));
            }
            RocksDbOracle.AssertSameContents(group.ToList(), got, $"prefix {group.Key}");
        }
        for (ulong prefix = 1_000_000; prefix < 1_000_100; prefix++)
        {
            it.Seek(AbsentPrefixKey(prefix));
            Assert.False(it.Valid);
        }
        Assert.True(stats.GetTickerCount(Ticker.BloomFilterPrefixChecked) > checkedBefore, "seeks never consulted the prefix filters");
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void RocksDbReadsKvEnginePrefixFilteredTables(bool partitioned)
    {
        string db = Path.Combine(_dir.FullName, "ours");
        var options = new KvOptions
        {
            PrefixExtractor = KvPrefixExtractor.FixedPrefix(8),
            WholeKeyFiltering = false,
            WriteBufferSize = 128 << 10,
            IndexType = partitioned ? KvIndexType.TwoLevelIndexSearch : KvIndexType.BinarySearch,
            PartitionFilters = partitioned,
            MetadataBlockSize = 512,
            DecouplePartitionedFilters = false, // what RocksDB 7.8 writes
        };
        var model = RocksDbOracle.NewModel();
        var rng = new Random(partitioned ? 3 : 4);
        using (KvDb kv = KvDb.Open(db, options))
        {
            for (int i = 0; i < 15_000; i++)
            {
                byte[] key = AbsentPrefixKey((ulong)rng.Next(1500) * 2); // even prefixes only
                BinaryPrimitives.WriteUInt64BigEndian(key.AsSpan(8), (ulong)rng.Next(1 << 20));
                byte[] value = BitConverter.GetBytes(i);
                kv.Put(key, value);
                model[key] = value;
            }
            kv.Flush();
        }
        string[] tables = Directory.GetFiles(db, "*.sst");
        Assert.NotEmpty(tables);
        foreach (string table in tables)
        {
            RocksDbTools.AssertSstDumpCheckPasses(table);
            string props = RocksDbTools.Properties(table);
            Assert.Contains("prefix extractor name: rocksdb.FixedPrefix.8", props, StringComparison.Ordinal);
            Assert.Contains("rocksdb.block.based.table.whole.key.filtering: 0x30", props, StringComparison.Ordinal);
            Assert.Contains("rocksdb.block.based.table.prefix.filtering: 0x31", props, StringComparison.Ordinal);
        }
        RocksDbOracle.AssertSameContents(RocksDbOracle.ToList(model), RocksDbOracle.Scan(db), "ldb scan");

        // ldb under the OPTIONS file's extractor: Gets check our prefix-only filters. A key whose
        // prefix hash were missing would come back "Not found".
        List<KeyValuePair<byte[], byte[]>> live = RocksDbOracle.ToList(model);
        List<KeyValuePair<byte[], byte[]>> probes = live.Where((_, i) => i % 5 == 0).ToList();
        List<byte[]?> got = RocksDbOracle.Get(db, probes.ConvertAll(p => p.Key), loadOptions: true);
        Assert.True(got.Count == probes.Count && got[^1] != null, $"RocksDB lost 0x{Convert.ToHexString(probes[got.Count - 1].Key)}");
        for (int i = 0; i < probes.Count; i++)
        {
            Assert.Equal(probes[i].Value, got[i]);
        }
        Assert.Null(Assert.Single(RocksDbOracle.Get(db, [AbsentPrefixKey(7)], loadOptions: true)));
    }
}
