using System.Text;
using KvEngine.Tests.Wal;

namespace KvEngine.Tests.Interop;

/// <summary>
/// SingleDelete and Repair against RocksDB 7.8's tools, both ways: ldb reads our single deletions
/// in the WAL (dump_wal prints SINGLE_DELETE) and in tables; a table RocksDB wrote holding a
/// single deletion (its flush of our WAL at open) reads correctly in KvEngine; a database
/// `ldb repair` rebuilt opens in KvEngine, and one KvEngine repaired is scanned by ldb.
/// </summary>
public sealed class AdminInteropTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-interop-admin-");

    public void Dispose() => _dir.Delete(recursive: true);

    private static byte[] B(string s) => Encoding.UTF8.GetBytes(s);

    private static string S(byte[] b) => Encoding.UTF8.GetString(b);

    private static Dictionary<string, string> AsStrings(List<KeyValuePair<byte[], byte[]>> pairs) =>
        pairs.ToDictionary(p => S(p.Key), p => S(p.Value));

    private static Dictionary<string, string> ReadFamily(KvDb db, ColumnFamilyHandle cf)
    {
        var result = new Dictionary<string, string>();
        using KvIterator it = db.NewIterator(cf);
        for (it.SeekToFirst(); it.Valid; it.Next())
        {
            result.Add(S(it.Key.ToArray()), S(it.Value.ToArray()));
        }
        return result;
    }

    // a, b, c and x written and flushed; x single-deleted and flushed (a table holding the
    // single deletion over the older one holding the value); a single-deleted in the WAL only.
    private string SingleDeleteDatabase()
    {
        string db = Path.Combine(_dir.FullName, "sdel");
        using KvDb kv = KvDb.Open(db, new KvOptions { DisableAutoCompactions = true });
        kv.Put(B("a"), B("va"));
        kv.Put(B("b"), B("vb"));
        kv.Put(B("c"), B("vc"));
        kv.Put(B("x"), B("vx"));
        kv.Flush();
        kv.SingleDelete(B("x"));
        kv.Flush();
        using var batch = new WriteBatch();
        batch.SingleDelete(B("a"));
        kv.Write(batch);
        return db;
    }

    [Fact]
    public void LdbReadsOurSingleDeletionsInTheWalAndInTables()
    {
        string db = SingleDeleteDatabase();
        string wal = Directory.GetFiles(db, "*.log").Order(StringComparer.Ordinal).Last();
        string dump = RocksDbTools.RunOk("ldb", "dump_wal", $"--walfile={wal}", "--header", "--print_value");
        Assert.Contains("SINGLE_DELETE(0) : 0x61", dump, StringComparison.Ordinal);

        string tables = string.Join('\n', Directory.GetFiles(db, "*.sst").Select(t =>
            RocksDbTools.RunOk("sst_dump", $"--file={t}", "--command=scan")));
        Assert.Contains("'x' seq:5, type:7", tables, StringComparison.Ordinal); // kTypeSingleDeletion in our table

        var scanned = AsStrings(RocksDbOracle.Scan(db));
        Assert.Equal(new Dictionary<string, string> { ["b"] = "vb", ["c"] = "vc" }, scanned);
        Assert.Equal(scanned, AsStrings(RocksDbOracle.ScanAfterCompaction(db)));
    }

    [Fact]
    public void ATableRocksDbWroteWithASingleDeletionReadsInKvEngine()
    {
        string db = SingleDeleteDatabase();
        string copy = RocksDbOracle.Copy(db, "rocks");
        // RocksDB replays our WAL at open and flushes it to a table of its own: the single
        // deletion of a meets no value in that memtable (a@1 is in an older table), so it stays.
        RocksDbTools.RunOk("ldb", $"--db={copy}", "put", "z", "vz");
        string[] before = Directory.GetFiles(db, "*.sst").Select(Path.GetFileName).ToArray()!;
        string[] rocksTables = Directory.GetFiles(copy, "*.sst").Where(t => !before.Contains(Path.GetFileName(t))).ToArray();
        Assert.NotEmpty(rocksTables);
        string scan = string.Join('\n', rocksTables.Select(t => RocksDbTools.RunOk("sst_dump", $"--file={t}", "--command=scan")));
        Assert.Contains("'a' seq:6, type:7", scan, StringComparison.Ordinal);

        using (KvDb kv = KvDb.Open(copy, new KvOptions { CreateIfMissing = false }))
        {
            Assert.Null(kv.Get(B("a")));
            Assert.Null(kv.Get(B("x")));
            Assert.Equal(new Dictionary<string, string> { ["b"] = "vb", ["c"] = "vc", ["z"] = "vz" }, ReadFamily(kv, kv.DefaultColumnFamily));
            kv.CompactRange(null, null);
            Assert.Equal(new Dictionary<string, string> { ["b"] = "vb", ["c"] = "vc", ["z"] = "vz" }, ReadFamily(kv, kv.DefaultColumnFamily));
        }
    }

    // Two families with tables and unflushed writes, then MANIFEST and CURRENT deleted.
    private string DatabaseWithoutManifest(string name)
    {
        string db = Path.Combine(_dir.FullName, name);
        using (KvDb kv = KvDb.Open(db, new KvOptions()))
        {
            ColumnFamilyHandle cf = kv.CreateColumnFamily("cf1");
            for (int i = 0; i < 300; i++)
            {
                kv.Put(B($"k{i:D3}"), B($"d{i}"));
                kv.Put(cf, B($"k{i:D3}"), B($"c{i}"));
            }
            kv.Flush();
            kv.DeleteRange(B("k100"), B("k200"));
            kv.Put(cf, B("wal-only"), B("w"));
            kv.Put(B("wal-only"), B("w"));
        }
        foreach (string f in Directory.GetFiles(db))
        {
            string n = Path.GetFileName(f);
            if (n == "CURRENT" || n.StartsWith("MANIFEST-", StringComparison.Ordinal))
            {
                File.Delete(f);
            }
        }
        return db;
    }

    private static void AssertExpectedContents(Dictionary<string, string> defaultFamily, Dictionary<string, string> cf1)
    {
        Assert.Equal(201, defaultFamily.Count); // 300 - 100 range-deleted + wal-only
        Assert.False(defaultFamily.ContainsKey("k150"));
        Assert.Equal("d299", defaultFamily["k299"]);
        Assert.Equal("w", defaultFamily["wal-only"]);
        Assert.Equal(301, cf1.Count);
        Assert.Equal("c150", cf1["k150"]);
        Assert.Equal("w", cf1["wal-only"]);
    }

    [Fact]
    public void OurRepairedDatabaseIsScannedByLdb()
    {
        string db = DatabaseWithoutManifest("ours");
        KvDb.Repair(db, new KvOptions(), [new ColumnFamilyDescriptor("cf1")]);
        RocksDbOracle.AssertConsistent(db);
        AssertExpectedContents(AsStrings(ColumnFamilyInteropTests.ScanFamily(db, "default")),
            AsStrings(ColumnFamilyInteropTests.ScanFamily(db, "cf1")));
    }

    [Fact]
    public void LdbRepairOutputOpensInKvEngine()
    {
        string db = DatabaseWithoutManifest("ldb");
        RocksDbTools.RunOk("ldb", $"--db={db}", "repair");
        Assert.Equal(new[] { "default", "cf1" }, KvDb.ListColumnFamilies(db));
        using KvDb kv = KvDb.Open(db, new KvOptions { CreateIfMissing = false }, [new ColumnFamilyDescriptor("default", new KvOptions { CreateIfMissing = false }), new ColumnFamilyDescriptor("cf1")]);
        AssertExpectedContents(ReadFamily(kv, kv.DefaultColumnFamily), ReadFamily(kv, kv.GetColumnFamily("cf1")!));
    }

    [Fact]
    public void ADatabaseLdbWroteIsRepairedByKvEngine()
    {
        string db = Path.Combine(_dir.FullName, "made-by-ldb");
        for (int i = 0; i < 5; i++)
        {
            // Each run replays the previous run's WAL into a table of RocksDB's.
            RocksDbTools.RunOk("ldb", $"--db={db}", "--create_if_missing", "put", $"key{i}", $"value{i}");
        }
        RocksDbTools.RunOk("ldb", $"--db={db}", "delete", "key2");
        Assert.NotEmpty(Directory.GetFiles(db, "*.sst"));
        foreach (string f in Directory.GetFiles(db, "MANIFEST-*"))
        {
            File.Delete(f);
        }
        KvDb.Repair(db);
        using KvDb kv = KvDb.Open(db, new KvOptions { CreateIfMissing = false });
        Assert.Equal(new Dictionary<string, string> { ["key0"] = "value0", ["key1"] = "value1", ["key3"] = "value3", ["key4"] = "value4" },
            ReadFamily(kv, kv.DefaultColumnFamily));
        Assert.Contains(Directory.GetFiles(db), f => Path.GetFileName(f).StartsWith("MANIFEST-", StringComparison.Ordinal));
    }
}
