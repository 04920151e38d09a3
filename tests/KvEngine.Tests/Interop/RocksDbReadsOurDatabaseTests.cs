using System.Globalization;

namespace KvEngine.Tests.Interop;

/// <summary>
/// Databases written by KvEngine (several flushed tables, overwrites, deletes, a tail only in the
/// WAL) opened by RocksDB 7.8: ldb must replay our WAL, read our MANIFEST and tables and list
/// exactly our live pairs, also after compacting our tables; manifest_dump, checkconsistency and
/// sst_dump must find nothing wrong.
/// </summary>
public sealed class RocksDbReadsOurDatabaseTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-interop-ours-");

    public void Dispose() => _dir.Delete(recursive: true);

    public static TheoryData<KvCompressionType, KvChecksumType> Formats() => new()
    {
        { KvCompressionType.Lz4, KvChecksumType.XxHash3 },
        { KvCompressionType.Zstd, KvChecksumType.Crc32C },
        { KvCompressionType.None, KvChecksumType.XxHash3 },
    };

    [Theory]
    [MemberData(nameof(Formats))]
    public void RocksDbSeesExactlyOurLiveData(KvCompressionType compression, KvChecksumType checksum)
    {
        string db = Path.Combine(_dir.FullName, "db");
        var options = new KvOptions
        {
            WriteBufferSize = 64 << 10,
            Compression = compression,
            Checksum = checksum,
            BlockSize = 1024,
            // Several overlapping level-0 tables plus a WAL tail are the point here; RocksDB reading
            // compaction output is covered by Compaction/CompactionInteropTests.
            DisableAutoCompactions = true,
        };
        var work = new InteropWorkload(seed: (int)compression * 31 + (int)checksum, poolSize: 3000);
        using (KvDb kv = KvDb.Open(db, options))
        {
            for (int round = 0; round < 4; round++)
            {
                work.Apply(kv, 2500);
                kv.Flush();
            }
            // This tail is only in the WAL: RocksDB must replay it.
            work.Apply(kv, 800);
        }
        Assert.True(work.Deletes > 1000, $"only {work.Deletes} deletes");
        Assert.True(work.Model.Count > 1500, $"only {work.Model.Count} live keys");
        string[] tables = Directory.GetFiles(db, "*.sst");
        Assert.True(tables.Length >= 4, $"expected several tables, found {tables.Length}");
        Assert.Contains(Directory.GetFiles(db, "*.log"), f => new FileInfo(f).Length > 0);

        RocksDbOracle.AssertSameContents(RocksDbOracle.ToList(work.Model), RocksDbOracle.Scan(db), "ldb scan");
        RocksDbOracle.AssertSameContents(RocksDbOracle.ToList(work.Model), RocksDbOracle.ScanAfterCompaction(db), "ldb scan after ldb compact");

        string dump = RocksDbOracle.ManifestDump(db);
        Assert.Contains("comparator: leveldb.BytewiseComparator", dump, StringComparison.Ordinal);
        foreach (string table in tables)
        {
            ulong number = ulong.Parse(Path.GetFileNameWithoutExtension(table), CultureInfo.InvariantCulture);
            Assert.Contains($" {number}:{new FileInfo(table).Length}[", dump, StringComparison.Ordinal);
        }
        Assert.Equal(tables.Length, RocksDbOracle.AssertTablesVerify(db));
        RocksDbOracle.AssertConsistent(db);

        // The oracle ran on copies: our directory is untouched and still reads the same.
        using (KvDb kv = KvDb.Open(db, options))
        {
            RocksDbOracle.AssertSameContents(RocksDbOracle.ToList(work.Model), RocksDbOracle.ForwardScan(kv), "KvEngine after reopen");
        }
    }
}
