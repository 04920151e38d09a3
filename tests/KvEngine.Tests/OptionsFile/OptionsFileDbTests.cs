using System.Text;
using KvEngine.OptionsFile;
using KvEngine.Storage;
using KvEngine.Table;
using KvEngine.Tests.Db;
using KvEngine.Tests.Interop;
using KvEngine.Tests.Table;

namespace KvEngine.Tests.OptionsFile;

/// <summary>
/// The OPTIONS file a database writes at open: named and rotated as RocksDB does, read by RocksDB
/// 7.8's ldb (which then writes tables with our options), and read back by
/// <see cref="KvOptions.LoadLatest(string)"/> so a reopened database keeps its compression.
/// </summary>
public class OptionsFileDbTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-options-");

    public void Dispose() => _dir.Delete(recursive: true);

    private static List<string> OptionsFiles(string db) =>
        Directory.GetFiles(db, "OPTIONS-*").Select(Path.GetFileName).Order(StringComparer.Ordinal).ToList()!;

    private static void Fill(KvDb db, int count, string prefix = "key")
    {
        for (int i = 0; i < count; i++)
        {
            db.Put(Encoding.ASCII.GetBytes($"{prefix}{i:D5}"), Encoding.ASCII.GetBytes($"value-{i:D5}-{new string('v', 100)}"));
        }
    }

    private static List<TableProperties> TableProperties(string db)
    {
        var result = new List<TableProperties>();
        foreach (string f in Directory.GetFiles(db, "*.sst").Order(StringComparer.Ordinal))
        {
            using TableReader reader = TableTestUtil.Open(File.ReadAllBytes(f), new TableOptions(), Path.GetFileName(f));
            result.Add(reader.Properties);
        }
        return result;
    }

    [Fact]
    public void EachOpenWritesANewerFileAndKeepsTheTwoNewest()
    {
        string path = Path.Combine(_dir.FullName, "db");
        var options = new KvOptions { Compression = KvCompressionType.Lz4, WriteBufferSize = 1 << 20 };
        var seen = new List<ulong>();
        for (int open = 0; open < 4; open++)
        {
            using (KvDb db = KvDb.Open(path, options))
            {
                Fill(db, 10, $"o{open}-");
            }
            List<string> files = OptionsFiles(path);
            Assert.Equal(Math.Min(open + 1, OptionsFileStore.FilesKept), files.Count);
            Assert.DoesNotContain(files, f => f.EndsWith(".dbtmp", StringComparison.Ordinal));
            Assert.True(OptionsFileNames.TryParse(files[^1], out ulong newest, out _));
            Assert.True(seen.Count == 0 || newest > seen[^1], $"OPTIONS numbers must grow: {newest} after {string.Join(",", seen)}");
            seen.Add(newest);
        }
        OptionsFileFormatTests.AssertPersistedEqual(WithSanitizedMaxCompactionBytes(options), KvOptions.LoadLatest(path));
    }

    private static KvOptions WithSanitizedMaxCompactionBytes(KvOptions options)
    {
        KvOptions copy = options.Clone();
        copy.MaxCompactionBytes = copy.MaxCompactionBytes > 0 ? copy.MaxCompactionBytes : copy.TargetFileSizeBase * 25;
        (ulong ttl, ulong periodic) = KvEngine.Compaction.CompactionOptions.ResolveTimes(copy.CompactionStyle, copy.Ttl,
            copy.PeriodicCompactionSeconds, copy.CompactionFilter != null);
        copy.Ttl = (long)ttl;
        copy.PeriodicCompactionSeconds = (long)periodic;
        return copy;
    }

    [Fact]
    public void ReopeningWithLoadLatestKeepsLz4()
    {
        string path = Path.Combine(_dir.FullName, "db");
        using (KvDb db = KvDb.Open(path, new KvOptions { Compression = KvCompressionType.Lz4 }))
        {
            Fill(db, 200);
            db.Flush();
        }
        KvOptions loaded = KvOptions.LoadLatest(path);
        Assert.Equal(KvCompressionType.Lz4, loaded.Compression);
        using (KvDb db = KvDb.Open(path, loaded))
        {
            Fill(db, 200, "more");
            db.Flush();
            Assert.Equal("value-00007-" + new string('v', 100), Encoding.ASCII.GetString(db.Get(Encoding.ASCII.GetBytes("key00007"))!));
        }
        List<TableProperties> tables = TableProperties(path);
        Assert.Equal(2, tables.Count);
        Assert.All(tables, t => Assert.Equal("LZ4", t.CompressionName));
    }

    [Fact]
    public void LoadLatestGivesEveryColumnFamilyItsOptionsBack()
    {
        string path = Path.Combine(_dir.FullName, "families");
        using (KvDb db = KvDb.Open(path, new KvOptions { Compression = KvCompressionType.Lz4 }))
        {
            db.CreateColumnFamily("zstd", new ColumnFamilyOptions { Compression = KvCompressionType.Zstd, WriteBufferSize = 1 << 20 });
            ColumnFamilyHandle gone = db.CreateColumnFamily("gone");
            db.CreateColumnFamily("plain", new ColumnFamilyOptions { Compression = KvCompressionType.None, BloomBitsPerKey = 0 });
            db.DropColumnFamily(gone); // the OPTIONS file is rewritten after each change
        }
        KvOptions loaded = KvOptions.LoadLatest(path, out IReadOnlyList<ColumnFamilyDescriptor> families);
        Assert.Equal(KvCompressionType.Lz4, loaded.Compression);
        Assert.Equal(new[] { "zstd", "plain" }, families.Select(f => f.Name));
        Assert.Equal(KvCompressionType.Zstd, families[0].Options.Compression);
        Assert.Equal(1 << 20, families[0].Options.WriteBufferSize);
        Assert.Equal(KvCompressionType.None, families[1].Options.Compression);
        Assert.Equal(0, families[1].Options.BloomBitsPerKey);
        using (KvDb db = KvDb.Open(path, loaded, DbTestUtil.WithDefault(loaded, families)))
        {
            ColumnFamilyHandle zstd = db.GetColumnFamily("zstd")!;
            Fill(db, 50);
            for (int i = 0; i < 50; i++)
            {
                db.Put(zstd, Encoding.ASCII.GetBytes($"z{i:D3}"), new byte[200]);
            }
            db.Flush();
        }
        List<TableProperties> tables = TableProperties(path);
        Assert.Contains(tables, t => t.CompressionName == "ZSTD" && t.ColumnFamilyName == "zstd");
        Assert.Contains(tables, t => t.CompressionName == "LZ4" && t.ColumnFamilyName == "default");
    }

    [Fact]
    public void LoadLatestRefusesMissingFilesAndDirectories()
    {
        Assert.Throws<KvException>(() => KvOptions.LoadLatest(Path.Combine(_dir.FullName, "nothing-here")));
        Directory.CreateDirectory(Path.Combine(_dir.FullName, "empty"));
        Assert.Throws<KvException>(() => KvOptions.LoadLatest(Path.Combine(_dir.FullName, "empty")));
        Assert.Throws<ArgumentException>(() => KvOptions.LoadLatest(""));
    }

    [Fact]
    public void LoadLatestReadsTheNewestFileAndReportsACorruptOne()
    {
        string path = Path.Combine(_dir.FullName, "db");
        using (KvDb db = KvDb.Open(path, new KvOptions { Compression = KvCompressionType.Zstd }))
        {
        }
        using (KvDb db = KvDb.Open(path, new KvOptions { Compression = KvCompressionType.Lz4 }))
        {
        }
        Assert.Equal(KvCompressionType.Lz4, KvOptions.LoadLatest(path).Compression);
        string newest = Path.Combine(path, OptionsFiles(path)[^1]);
        File.WriteAllText(newest, File.ReadAllText(newest).Replace("[DBOptions]", "[DBOptions", StringComparison.Ordinal));
        KvCorruptionException e = Assert.Throws<KvCorruptionException>(() => KvOptions.LoadLatest(path));
        Assert.Contains(Path.GetFileName(newest), e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void AFailedOptionsWriteDoesNotFailTheOpen()
    {
        // RocksDB's fail_if_options_file_error defaults to false: the failure is logged, the open succeeds.
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        fs.ShouldFail = static (op, p) => op == FileOperation.Create && Path.GetFileName(p).StartsWith(OptionsFileNames.Prefix, StringComparison.Ordinal);
        KvOptions options = DbTestUtil.SmallOptions(fs);
        using (KvDb db = KvDb.Open("/db", options))
        {
            db.Put("k"u8.ToArray(), "v"u8.ToArray());
        }
        Assert.DoesNotContain(fs.GetChildren("/db"), n => n.StartsWith(OptionsFileNames.Prefix, StringComparison.Ordinal));
        fs.ShouldFail = null;
        using (KvDb db = KvDb.Open("/db", options))
        {
            Assert.Equal("v"u8.ToArray(), db.Get("k"u8.ToArray()));
        }
        Assert.Single(fs.GetChildren("/db"), n => n.StartsWith(OptionsFileNames.Prefix, StringComparison.Ordinal));
    }

    [Fact]
    public void LdbLoadsOurOptionsAndWritesTablesWithThem()
    {
        string path = Path.Combine(_dir.FullName, "db");
        var options = new KvOptions { Compression = KvCompressionType.Lz4, BloomBitsPerKey = 10, Checksum = KvChecksumType.Crc32C };
        using (KvDb db = KvDb.Open(path, options))
        {
            Fill(db, 300);
            db.Flush();
            Fill(db, 300, "zz");
        }
        string copy = RocksDbOracle.Copy(path, "ldb");
        (int rc, string stdout, string stderr) = RocksDbTools.Run("ldb", [$"--db={copy}", "--try_load_options", "scan"]);
        Assert.True(rc == 0, $"ldb --try_load_options scan failed ({rc}): {stderr}");
        Assert.Equal(600, stdout.Split('\n').Count(l => l.Contains(" : value-", StringComparison.Ordinal)));

        // Without the OPTIONS file ldb would compact into Snappy tables with XXH3 checksums.
        (rc, _, stderr) = RocksDbTools.Run("ldb", [$"--db={copy}", "--try_load_options", "compact"]);
        Assert.True(rc == 0, $"ldb --try_load_options compact failed ({rc}): {stderr}");
        string[] tables = Directory.GetFiles(copy, "*.sst");
        Assert.Single(tables);
        string props = RocksDbTools.Properties(tables[0]);
        Assert.Contains("SST file compression algo: LZ4", props, StringComparison.Ordinal);
        Assert.Contains("filter policy name: bloomfilter", props, StringComparison.Ordinal);
        using TableReader reader = TableTestUtil.Open(File.ReadAllBytes(tables[0]), new TableOptions(), "ldb-output");
        Assert.Equal(ChecksumType.Crc32C, reader.Footer.ChecksumType);
    }
}
