using KvEngine.Compression;
using KvEngine.Filters;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Storage;
using KvEngine.Table;

namespace KvEngine.Tests.Table;

/// <summary>
/// Partitioned index and filters against RocksDB 7.8's tools: sst_dump checks and scans our
/// coupled and decoupled two-level tables exactly, and reports their partitions.
/// </summary>
public sealed class PartitionedInteropTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-partition-interop-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Theory]
    [InlineData(false, (byte)CompressionType.None, 4096, 1)]
    [InlineData(true, (byte)CompressionType.None, 4096, 1)]
    [InlineData(true, (byte)CompressionType.Lz4, 512, 1)]
    [InlineData(false, (byte)CompressionType.Zstd, 256, 4)]
    [InlineData(true, (byte)CompressionType.Zstd, 256, 4)]
    public void SstDumpChecksAndScansOurPartitionedTables(bool decoupled, byte codec, int metadataBlockSize, int indexRestartInterval)
    {
        TableOptions options = PartitionedTables.Options(decoupled, metadataBlockSize) with
        {
            Compression = (CompressionType)codec,
            IndexBlockRestartInterval = indexRestartInterval,
        };
        List<Entry> entries = TableTestUtil.MakeEntries(20_000, seed: metadataBlockSize + codec, maxValue: 60);
        string path = Path.Combine(_dir.FullName, "000009.sst");
        TableProperties written;
        using (IWritableFile file = LocalFileSystem.Instance.CreateWritable(path))
        using (var builder = new TableBuilder(options, file))
        {
            foreach (Entry e in entries)
            {
                builder.Add(e.Key, e.Value);
            }
            builder.Finish();
            written = builder.Properties;
        }
        Assert.True(written.IndexPartitions > 1, $"only {written.IndexPartitions} index partitions");

        RocksDbTools.AssertSstDumpCheckPasses(path);
        var scanned = RocksDbTools.Scan(path);
        Assert.Equal(entries.Count, scanned.Count);
        for (int i = 0; i < entries.Count; i++)
        {
            Entry e = entries[i];
            Assert.Equal(Convert.ToHexString(InternalKeys.UserKey(e.Key)), scanned[i].Key);
            Assert.Equal(InternalKeys.Sequence(e.Key), scanned[i].Seq);
            Assert.Equal((int)InternalKeys.Type(e.Key), scanned[i].Type);
            Assert.Equal(Convert.ToHexString(e.Value), scanned[i].Value);
        }

        string props = RocksDbTools.Properties(path);
        Assert.Contains($"# index partitions: {written.IndexPartitions}\n", props, StringComparison.Ordinal);
        Assert.Contains($"top-level index size: {written.TopLevelIndexSize}\n", props, StringComparison.Ordinal);
        Assert.Contains($"filter block size: {written.FilterSize}\n", props, StringComparison.Ordinal);
        Assert.Contains("rocksdb.block.based.table.index.type: 0x02000000", props, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(4096, 1)]
    [InlineData(512, 1)]
    [InlineData(1000, 2)]
    [InlineData(256, 2)]
    public void CoupledPartitionsAreCutWhereRocksDb78CutsThem(int metadataBlockSize, int shortening)
    {
        // db_bench writes one table (the memtable flushed at close); we rebuild it from its entries
        // with the same settings and compare the layouts block for block.
        string db = Path.Combine(_dir.FullName, "db");
        (int rc, string stdout, string stderr) = RocksDbTools.Run("db_bench",
        [
            "-benchmarks=fillrandom", "-num=30000", "-value_size=100", "-compression_type=none", "-partition_index_and_filters=1",
            $"-metadata_block_size={metadataBlockSize}", "-bloom_bits=10", "-disable_wal=1", "-write_buffer_size=67108864",
            $"-index_shortening_mode={shortening}", $"-db={db}",
        ], 120_000);
        Assert.True(rc == 0, $"db_bench failed ({rc}): {stdout} {stderr}");
        string path = Assert.Single(Directory.GetFiles(db, "*.sst"));
        byte[] theirs = File.ReadAllBytes(path);
        List<Entry> entries;
        TableProperties theirProps;
        using (TableReader reader = TableReader.Open(new MemoryRandomAccessFile(theirs), theirs.Length, new TableOptions(), path))
        {
            using InternalIterator it = reader.NewIterator(true);
            entries = TableTestUtil.ScanForward(it);
            theirProps = reader.Properties;
        }
        Assert.True(entries.Count > 15_000, $"{entries.Count} entries");

        TableOptions options = PartitionedTables.Options(decoupled: false, metadataBlockSize) with
        {
            IndexShortening = shortening == 2 ? IndexShortening.ShortenSeparatorsAndSuccessor : IndexShortening.ShortenSeparators,
        };
        byte[] ours = TableTestUtil.Build(options, entries);
        using TableReader ourReader = TableTestUtil.Open(ours, options);
        PartitionedLayout a = PartitionedLayout.Read(theirs, theirProps);
        PartitionedLayout b = PartitionedLayout.Read(ours, ourReader.Properties);
        Assert.Equal(theirProps.IndexPartitions, ourReader.Properties.IndexPartitions);
        Assert.Equal(theirProps.TopLevelIndexSize, ourReader.Properties.TopLevelIndexSize);
        Assert.Equal(theirProps.IndexSize, ourReader.Properties.IndexSize);
        Assert.Equal(theirProps.FilterSize, ourReader.Properties.FilterSize);
        Assert.Equal(theirProps.NumFilterEntries, ourReader.Properties.NumFilterEntries);
        Assert.Equal(Describe(a.IndexPartitions), Describe(b.IndexPartitions));
        Assert.Equal(Describe(a.FilterPartitions), Describe(b.FilterPartitions));
        for (int p = 0; p < a.FilterPartitions.Count; p++)
        {
            Assert.Equal(PartitionedLayout.Contents(theirs, a.FilterPartitions[p].Handle), PartitionedLayout.Contents(ours, b.FilterPartitions[p].Handle));
        }
    }

    private static List<string> Describe(List<(byte[] Key, BlockHandle Handle)> partitions) =>
        partitions.ConvertAll(p => $"{Convert.ToHexString(p.Key)} {p.Handle}");
}
