using System.Text;

namespace KvEngine.Tests.Interop;

/// <summary>
/// Tables written with direct I/O (padded last sector cut off) are ordinary RocksDB tables:
/// sst_dump verifies every one with checksums and ldb scans the same pairs KvEngine wrote.
/// </summary>
public sealed class DirectIOInteropTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-directinterop-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Fact]
    public void TablesWrittenWithDirectIOVerifyWithSstDumpAndScanWithLdb()
    {
        string path = Path.Combine(_dir.FullName, "db");
        var options = new KvOptions
        {
            UseDirectReads = true,
            UseDirectIoForFlushAndCompaction = true,
            WriteBufferSize = 64 << 10,
            Level0FileNumCompactionTrigger = 2,
            Compression = KvCompressionType.Lz4,
        };
        var expected = new SortedDictionary<string, string>(StringComparer.Ordinal);
        var rng = new Random(7);
        using (KvDb db = KvDb.Open(path, options))
        {
            for (int i = 0; i < 6_000; i++)
            {
                string key = $"k{rng.Next(3_000):D6}";
                string value = new string('v', rng.Next(1, 200)) + i;
                db.Put(Encoding.ASCII.GetBytes(key), Encoding.ASCII.GetBytes(value));
                expected[key] = value;
            }
            db.Flush();
            db.CompactRange(null, null);
        }
        Assert.True(RocksDbOracle.AssertTablesVerify(path) > 0);
        List<KeyValuePair<byte[], byte[]>> scanned = RocksDbOracle.Scan(path);
        RocksDbOracle.AssertSameContents(
            expected.Select(e => KeyValuePair.Create(Encoding.ASCII.GetBytes(e.Key), Encoding.ASCII.GetBytes(e.Value))).ToList(),
            scanned, "ldb scan of a direct-I/O database");
    }
}
