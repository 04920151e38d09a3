using System.Text;
using KvEngine.Tests.Wal;

using KvEngine.Tests.Db;

namespace KvEngine.Tests.Interop;

/// <summary>
/// Column families against RocksDB 7.8's tools, both ways: databases ldb and db_bench made with
/// several families (unflushed data of several families in the WAL included) open in KvEngine
/// with the same contents; ldb lists and scans the families of databases KvEngine wrote, from
/// tables and from the WAL.
/// </summary>
public sealed class ColumnFamilyInteropTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-interop-cf-");

    public void Dispose() => _dir.Delete(recursive: true);

    private static byte[] B(string s) => Encoding.UTF8.GetBytes(s);

    [Fact]
    public void LdbFamiliesWithUnflushedWalDataOpenInKvEngine()
    {
        string db = Path.Combine(_dir.FullName, "ldb");
        Ldb(db, "--create_if_missing", "put", "k", "default-value");
        RocksDbTools.RunOk("ldb", $"--db={db}", "create_column_family", "cf1");
        RocksDbTools.RunOk("ldb", $"--db={db}", "create_column_family", "cf2");
        Ldb(db, "--column_family=cf1", "put", "k", "cf1-value");
        Ldb(db, "--column_family=cf2", "put", "k2", "cf2-value");
        Ldb(db, "--column_family=cf1", "put", "only-cf1", "x");

        Assert.Equal(new[] { "default", "cf1", "cf2" }, KvDb.ListColumnFamilies(db));
        var e = Assert.Throws<ArgumentException>(() => KvDb.Open(db, new KvOptions { CreateIfMissing = false }).Dispose());
        Assert.Contains("cf1", e.Message, StringComparison.Ordinal);

        using KvDb kv = KvDb.Open(db, new KvOptions { CreateIfMissing = false },
            [new ColumnFamilyDescriptor("default", new KvOptions { CreateIfMissing = false }), new ColumnFamilyDescriptor("cf1"), new ColumnFamilyDescriptor("cf2")]);
        ColumnFamilyHandle cf1 = kv.GetColumnFamily("cf1")!;
        ColumnFamilyHandle cf2 = kv.GetColumnFamily("cf2")!;
        Assert.Equal("default-value", S(kv.Get(B("k"))));
        Assert.Equal("cf1-value", S(kv.Get(cf1, B("k"))));
        Assert.Equal("x", S(kv.Get(cf1, B("only-cf1"))));
        Assert.Null(kv.Get(cf2, B("k")));
        Assert.Equal("cf2-value", S(kv.Get(cf2, B("k2"))));
        Assert.Null(kv.Get(B("only-cf1")));
    }

    [Fact]
    public void DbBenchFamiliesReadTheSameInKvEngine()
    {
        string db = Path.Combine(_dir.FullName, "bench");
        KvEngineReadsRocksDbTests.RunDbBench(db,
            ["-benchmarks=fillrandom", "-num=3000", "-write_buffer_size=65536", "-compression_type=lz4", "-num_column_families=3"]);
        IReadOnlyList<string> names = KvDb.ListColumnFamilies(db);
        Assert.Equal(3, names.Count);
        Assert.Equal("default", names[0]);
        var descriptors = names.Skip(1).Select(n => new ColumnFamilyDescriptor(n)).ToList();
        using KvDb kv = KvDb.Open(db, new KvOptions { CreateIfMissing = false }, DbTestUtil.WithDefault(new KvOptions { CreateIfMissing = false }, descriptors));
        int total = 0;
        foreach (string name in names)
        {
            List<KeyValuePair<byte[], byte[]>> expected = ScanFamily(db, name);
            using KvIterator it = kv.NewIterator(kv.GetColumnFamily(name)!);
            var got = new List<KeyValuePair<byte[], byte[]>>();
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
                got.Add(new(it.Key.ToArray(), it.Value.ToArray()));
            }
            RocksDbOracle.AssertSameContents(expected, got, name);
            total += got.Count;
        }
        Assert.True(total > 0, "db_bench wrote nothing");
    }

    [Fact]
    public void LdbListsAndScansTheFamiliesKvEngineWrote()
    {
        string db = Path.Combine(_dir.FullName, "ours");
        using (KvDb kv = KvDb.Open(db, new KvOptions { Compression = KvCompressionType.Lz4 }))
        {
            ColumnFamilyHandle a = kv.CreateColumnFamily("alpha", new ColumnFamilyOptions { Compression = KvCompressionType.Zstd });
            ColumnFamilyHandle b = kv.CreateColumnFamily("beta");
            ColumnFamilyHandle gone = kv.CreateColumnFamily("gone");
            kv.Put(gone, B("g"), B("g"));
            for (int i = 0; i < 200; i++)
            {
                using var batch = new WriteBatch();
                batch.Put(B($"d{i:D4}"), B($"default{i}"));
                batch.Put(a, B($"a{i:D4}"), B($"alpha{i}"));
                kv.Write(batch);
            }
            kv.Flush(a); // alpha in a table, the rest only in the WAL
            kv.Put(b, B("b"), B("beta-in-wal"));
            kv.DropColumnFamily(gone);
        }

        string list = RocksDbTools.RunOk("ldb", $"--db={db}", "list_column_families");
        Assert.Contains("{default, alpha, beta}", list, StringComparison.Ordinal);
        List<KeyValuePair<byte[], byte[]>> alpha = ScanFamily(db, "alpha");
        Assert.Equal(200, alpha.Count);
        Assert.Equal("alpha7", S(alpha.Single(p => S(p.Key) == "a0007").Value));
        Assert.Equal(200, ScanFamily(db, "default").Count);
        Assert.Equal("beta-in-wal", S(ScanFamily(db, "beta").Single().Value));

        // And back: reopened by KvEngine, every family holds what it held.
        using KvDb again = KvDb.Open(db, new KvOptions(), [new ColumnFamilyDescriptor("default", new KvOptions()), new ColumnFamilyDescriptor("alpha"), new ColumnFamilyDescriptor("beta")]);
        Assert.Equal("alpha199", S(again.Get(again.GetColumnFamily("alpha")!, B("a0199"))));
        Assert.Equal("beta-in-wal", S(again.Get(again.GetColumnFamily("beta")!, B("b"))));
        Assert.Null(again.GetColumnFamily("gone"));
    }

    [Fact]
    public void AnAtomicFlushIsOneAtomicGroupThatRocksDbReads()
    {
        string db = Path.Combine(_dir.FullName, "atomic");
        using (KvDb kv = KvDb.Open(db, new KvOptions { AtomicFlush = true, CreateMissingColumnFamilies = true },
            [new ColumnFamilyDescriptor("default", new KvOptions { AtomicFlush = true, CreateMissingColumnFamilies = true }), new ColumnFamilyDescriptor("one"), new ColumnFamilyDescriptor("two")]))
        {
            using var batch = new WriteBatch();
            batch.Put(B("k0"), B("v0"));
            batch.Put(kv.GetColumnFamily("one")!, B("k1"), B("v1"));
            batch.Put(kv.GetColumnFamily("two")!, B("k2"), B("v2"));
            kv.Write(batch);
            kv.Flush(kv.GetColumnFamily("one")!); // atomic flush: every family with data goes
            foreach (ColumnFamilyHandle h in kv.ColumnFamilies)
            {
                Assert.Equal("1", kv.GetProperty(h, "rocksdb.num-files-at-level0"));
            }
        }
        string dump = RocksDbTools.RunOk("ldb", $"--db={db}", "manifest_dump", "--verbose");
        Assert.DoesNotContain("Corruption", dump, StringComparison.Ordinal);
        Assert.Contains("AtomicGroup: 2 entries remains", dump, StringComparison.Ordinal);
        Assert.Contains("AtomicGroup: 0 entries remains", dump, StringComparison.Ordinal);
        Assert.Equal("v1", S(ScanFamily(db, "one").Single().Value));
        Assert.Equal("v2", S(ScanFamily(db, "two").Single().Value));
        Assert.Equal("v0", S(ScanFamily(db, "default").Single().Value));
    }

    [Fact]
    public void LdbReadsTheManifestOfADropThatFreedTheOldestWal()
    {
        // The drop of b makes the first WAL obsolete and records MinLogNumberToKeep with it.
        string db = Path.Combine(_dir.FullName, "dropfreed");
        using (KvDb kv = KvDb.Open(db, new KvOptions()))
        {
            ColumnFamilyHandle a = kv.CreateColumnFamily("a");
            ColumnFamilyHandle b = kv.CreateColumnFamily("b");
            for (int i = 0; i < 50; i++)
            {
                kv.Put(a, B($"a{i:D3}"), B($"va{i}"));
                kv.Put(b, B($"b{i:D3}"), B($"vb{i}"));
            }
            kv.Flush(a);
            kv.DropColumnFamily(b);
            kv.Put(a, B("late"), B("in-the-new-wal"));
        }
        Assert.Contains("{default, a}", RocksDbTools.RunOk("ldb", $"--db={db}", "list_column_families"), StringComparison.Ordinal);
        List<KeyValuePair<byte[], byte[]>> a2 = ScanFamily(db, "a");
        Assert.Equal(51, a2.Count);
        Assert.Equal("in-the-new-wal", S(a2.Single(p => S(p.Key) == "late").Value));
        using KvDb again = KvDb.Open(db, new KvOptions(), [new ColumnFamilyDescriptor("default", new KvOptions()), new ColumnFamilyDescriptor("a")]);
        Assert.Equal("va7", S(again.Get(again.GetColumnFamily("a")!, B("a007"))));
    }

    private static string? S(byte[]? b) => b == null ? null : Encoding.UTF8.GetString(b);

    /// <summary><c>ldb --column_family=NAME scan --hex</c> on a copy of the database.</summary>
    internal static List<KeyValuePair<byte[], byte[]>> ScanFamily(string db, string family)
    {
        string copy = RocksDbOracle.Copy(db, "cfscan");
        try
        {
            string output = RocksDbTools.RunOk("ldb", $"--db={copy}", $"--column_family={family}", "scan", "--hex");
            var result = new List<KeyValuePair<byte[], byte[]>>();
            foreach (string line in output.Split('\n', StringSplitOptions.RemoveEmptyEntries))
            {
                int sep = line.IndexOf(" : ", StringComparison.Ordinal);
                Assert.True(sep > 0, $"Unexpected ldb scan line: '{line}'");
                result.Add(new(Convert.FromHexString(line.AsSpan(2, sep - 2)), Convert.FromHexString(line.AsSpan(sep + 5))));
            }
            return result;
        }
        finally
        {
            Directory.Delete(copy, recursive: true);
        }
    }

    private static void Ldb(string db, params string[] args) =>
        RocksDbTools.RunOk("ldb", [$"--db={db}", "--compression_type=lz4", .. args]);
}
