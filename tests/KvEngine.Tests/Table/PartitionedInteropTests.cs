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
}
