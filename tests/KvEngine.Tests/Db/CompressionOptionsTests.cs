using System.Text;
using KvEngine.Table;
using KvEngine.Tests.Table;

namespace KvEngine.Tests.Db;

/// <summary>
/// KvOptions.CompressionLevel, BottommostCompression and BottommostCompressionLevel reach the
/// tables they should (read back from each table's rocksdb.compression and compression_options
/// properties), and bad values are refused at open.
/// </summary>
public class CompressionOptionsTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-compression-");

    public void Dispose() => _dir.Delete(recursive: true);

    private static void Fill(KvDb db, int from, int count)
    {
        for (int i = from; i < from + count; i++)
        {
            db.Put(Encoding.ASCII.GetBytes($"key{i:D6}"), Encoding.ASCII.GetBytes($"value{i:D6}-{new string((char)('a' + (i % 26)), 80)}"));
        }
    }

    private List<TableProperties> Tables(string path)
    {
        var result = new List<TableProperties>();
        foreach (FileInfo f in new DirectoryInfo(path).GetFiles("*.sst"))
        {
            using TableReader reader = TableTestUtil.Open(File.ReadAllBytes(f.FullName), new TableOptions(), f.Name);
            result.Add(reader.Properties);
        }
        return result;
    }

    [Fact]
    public void FlushesUseCompressionAndBottommostOutputsUseBottommostCompression()
    {
        string path = Path.Combine(_dir.FullName, "db");
        var options = new KvOptions
        {
            Compression = KvCompressionType.Lz4,
            CompressionLevel = -4,
            BottommostCompression = KvCompressionType.Zstd,
            BottommostCompressionLevel = 19,
            DisableAutoCompactions = true,
        };
        using (KvDb db = KvDb.Open(path, options))
        {
            Fill(db, 0, 2000);
            db.Flush();
            Fill(db, 1000, 2000); // overlaps the first table, so compaction must merge, not move
            db.Flush();
            List<TableProperties> flushed = Tables(path);
            Assert.Equal(2, flushed.Count);
            Assert.All(flushed, p =>
            {
                Assert.Equal("LZ4", p.CompressionName);
                Assert.Contains("level=-4;", p.CompressionOptions, StringComparison.Ordinal);
            });

            db.CompactRange(null, null);
            List<TableProperties> compacted = Tables(path);
            Assert.NotEmpty(compacted);
            Assert.All(compacted, p =>
            {
                Assert.Equal("ZSTD", p.CompressionName);
                Assert.Contains("level=19;", p.CompressionOptions, StringComparison.Ordinal);
            });
        }
        using (KvDb db = KvDb.Open(path, options))
        {
            Assert.Equal(Encoding.ASCII.GetBytes($"value{2999:D6}-{new string((char)('a' + (2999 % 26)), 80)}"), db.Get("key002999"u8));
            Assert.Equal(Encoding.ASCII.GetBytes($"value{1999:D6}-{new string((char)('a' + (1999 % 26)), 80)}"), db.Get("key001999"u8));
        }
    }

    [Fact]
    public void WithoutBottommostCompressionEveryTableUsesCompression()
    {
        string path = Path.Combine(_dir.FullName, "db");
        using KvDb db = KvDb.Open(path, new KvOptions { Compression = KvCompressionType.Lz4HC, CompressionLevel = 12, DisableAutoCompactions = true });
        Fill(db, 0, 1500);
        db.Flush();
        db.CompactRange(null, null);
        Assert.All(Tables(path), p =>
        {
            Assert.Equal("LZ4HC", p.CompressionName);
            Assert.Contains("level=12;", p.CompressionOptions, StringComparison.Ordinal);
        });
    }

    [Theory]
    [InlineData(23, null)]
    [InlineData(-200_000, null)]
    [InlineData(KvOptions.DefaultCompressionLevel, 99)]
    public void OutOfRangeLevelsAreRefused(int level, int? bottommostLevel)
    {
        var options = new KvOptions { CompressionLevel = level, BottommostCompressionLevel = bottommostLevel };
        Assert.Throws<ArgumentOutOfRangeException>(() => KvDb.Open(Path.Combine(_dir.FullName, "db"), options));
    }

    [Fact]
    public void UnknownBottommostCompressionIsRefused()
    {
        var options = new KvOptions { BottommostCompression = (KvCompressionType)2 };
        Assert.Throws<ArgumentException>(() => KvDb.Open(Path.Combine(_dir.FullName, "db"), options));
    }
}
