using System.Text;
using KvEngine.Tests.Db;
using KvEngine.Tests.Db.Checkpoints;
using KvEngine.Tests.Wal;

namespace KvEngine.Tests.Interop;

/// <summary>
/// Checkpoints against RocksDB 7.8's ldb, both ways: ldb scans every family of a checkpoint
/// KvEngine made (tables hard-linked on the local file system, unflushed data in the copied WAL),
/// and a checkpoint ldb made of a KvEngine database (<c>ldb checkpoint</c>) opens in KvEngine,
/// read-write and read-only, with the same contents. Tools run through <see cref="RocksDbTools"/>,
/// which fails with the install command when ldb is missing.
/// </summary>
public sealed class CheckpointInteropTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-interop-ckpt-");

    public void Dispose() => _dir.Delete(recursive: true);

    private static byte[] B(string s) => Encoding.UTF8.GetBytes(s);

    private static ColumnFamilyDescriptor[] Families() => [new ColumnFamilyDescriptor("alpha"), new ColumnFamilyDescriptor("beta")];

    private static KvOptions Options() => new() { CreateMissingColumnFamilies = true, WriteBufferSize = 64 << 10, Compression = KvCompressionType.Lz4 };

    /// <summary>Tables in two families, deletions, a range deletion, and data only in the WAL.</summary>
    private static void Fill(KvDb db)
    {
        ColumnFamilyHandle alpha = db.GetColumnFamily("alpha")!;
        ColumnFamilyHandle beta = db.GetColumnFamily("beta")!;
        for (int i = 0; i < 2000; i++)
        {
            db.Put(B($"d{i:D5}"), B($"default-{i}"));
            db.Put(alpha, B($"a{i:D5}"), B($"alpha-{i}"));
        }
        db.Flush();
        db.DeleteRange(B("d00100"), B("d00200"));
        db.Delete(alpha, B("a00005"));
        db.Put(beta, B("b"), B("beta-in-wal"));
        db.Put(B("d00001"), B("overwritten-in-wal"));
    }

    [Fact]
    public void LdbScansEveryFamilyOfOurCheckpoint()
    {
        string source = Path.Combine(_dir.FullName, "source");
        string checkpoint = Path.Combine(_dir.FullName, "checkpoint");
        Dictionary<string, SortedDictionary<string, string>> expected;
        using (KvDb db = KvDb.Open(source, Options(), DbTestUtil.WithDefault(Options(), Families())))
        {
            Fill(db);
            expected = Contents(db);
            db.CreateCheckpoint(checkpoint, logSizeForFlush: ulong.MaxValue); // the WAL data goes by the copied WAL
            // Hard links on the local file system: the checkpoint's tables are the source's files.
            foreach (string table in Directory.GetFiles(checkpoint, "*.sst"))
            {
                Assert.True(File.Exists(Path.Combine(source, Path.GetFileName(table))));
            }
            db.Put(B("after"), B("x"));
        }
        Assert.False(Directory.Exists(checkpoint + ".tmp"));
        foreach ((string family, SortedDictionary<string, string> rows) in expected)
        {
            Assert.Equal(rows, LdbScan(checkpoint, family));
        }
        Assert.NotEmpty(expected["beta"]);
    }

    [Fact]
    public void LdbsCheckpointOfOurDatabaseOpensInKvEngine()
    {
        string source = Path.Combine(_dir.FullName, "source");
        string checkpoint = Path.Combine(_dir.FullName, "ldb-checkpoint");
        Dictionary<string, SortedDictionary<string, string>> expected;
        using (KvDb db = KvDb.Open(source, Options(), DbTestUtil.WithDefault(Options(), Families())))
        {
            Fill(db);
            expected = Contents(db);
        }
        string copy = RocksDbOracle.Copy(source, "forldb"); // ldb flushes and rewrites the MANIFEST of what it opens
        string output = RocksDbTools.RunOk("ldb", $"--db={copy}", "checkpoint", $"--checkpoint_dir={checkpoint}");
        Assert.Contains("OK", output, StringComparison.Ordinal);
        using (KvDb ro = KvDb.OpenReadOnly(checkpoint, Options(), DbTestUtil.WithDefault(Options(), Families())))
        {
            Assert.Equal(expected, Contents(ro));
        }
        using KvDb rw = KvDb.Open(checkpoint, Options(), DbTestUtil.WithDefault(Options(), Families()));
        Assert.Equal(expected, Contents(rw));
    }

    /// <summary>Every family's contents, by name.</summary>
    private static Dictionary<string, SortedDictionary<string, string>> Contents(KvDb db) =>
        db.ColumnFamilies.ToDictionary(h => h.Name, h => CheckpointContents.ReadFamily(db, h));

    /// <summary><c>ldb --column_family=NAME scan --hex</c> on a copy of <paramref name="db"/>, as strings.</summary>
    private static SortedDictionary<string, string> LdbScan(string db, string family) =>
        new(ColumnFamilyInteropTests.ScanFamily(db, family).ToDictionary(p => Encoding.UTF8.GetString(p.Key), p => Encoding.UTF8.GetString(p.Value)),
            StringComparer.Ordinal);
}
