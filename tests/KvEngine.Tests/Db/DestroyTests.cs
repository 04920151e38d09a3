using static KvEngine.Tests.Db.DbTestUtil;

namespace KvEngine.Tests.Db;

/// <summary>
/// KvDb.Destroy (RocksDB's DestroyDB): every database file goes, then the directory if empty;
/// unrelated files stay; an open database (its LOCK held, in this or another instance) is refused
/// with nothing deleted.
/// </summary>
public sealed class DestroyTests
{
    private static KvDb MakeDatabase(KvOptions options)
    {
        KvDb db = KvDb.Open(DbPath, options);
        ColumnFamilyHandle cf = db.CreateColumnFamily("cf");
        db.Put(B("a"), B("1"));
        db.Put(cf, B("b"), B("2"));
        db.Flush();
        db.Put(B("unflushed"), B("3"));
        return db;
    }

    [Fact]
    public void DeletesEveryDatabaseFileAndKeepsOthers()
    {
        var fs = NewFs();
        var options = new KvOptions { FileSystem = fs };
        MakeDatabase(options).Dispose();
        fs.WriteAllBytes(DbPath + "/notes.txt", B("mine"));
        fs.WriteAllBytes(DbPath + "/LOG.old.123", B("old log"));
        fs.WriteAllBytes(DbPath + "/000099.dbtmp", B("temp"));
        IReadOnlyList<string> before = fs.GetChildren(DbPath);
        Assert.Contains(before, n => n.EndsWith(".sst", StringComparison.Ordinal));
        Assert.Contains(before, n => n.EndsWith(".log", StringComparison.Ordinal));
        Assert.Contains(before, n => n.StartsWith("OPTIONS-", StringComparison.Ordinal));
        Assert.Contains("IDENTITY", before);

        KvDb.Destroy(DbPath, options);

        Assert.Equal(new[] { "notes.txt" }, fs.GetChildren(DbPath));
        Assert.True(fs.DirectoryExists(DbPath)); // not empty: kept
        Assert.Throws<KvException>(() => KvDb.Open(DbPath, new KvOptions { FileSystem = fs, CreateIfMissing = false }).Dispose());

        fs.DeleteFile(DbPath + "/notes.txt");
        KvDb.Destroy(DbPath, options);
        Assert.False(fs.DirectoryExists(DbPath));
        KvDb.Destroy(DbPath, options); // a missing database: nothing to do
    }

    [Fact]
    public void RefusesAnOpenDatabaseAndDeletesNothing()
    {
        var fs = NewFs();
        var options = new KvOptions { FileSystem = fs };
        using KvDb db = MakeDatabase(options);
        IReadOnlyList<string> before = fs.GetChildren(DbPath);
        var e = Assert.Throws<KvLockHeldException>(() => KvDb.Destroy(DbPath, options));
        Assert.Contains("open", e.Message, StringComparison.Ordinal);
        Assert.Equal(before, fs.GetChildren(DbPath));
        Assert.Equal("3", S(db.Get(B("unflushed"))));
        db.Put(B("after"), B("4"));
        db.Flush();
    }

    [Fact]
    public void OnDiskAnotherInstanceHoldingItIsRefusedThenTheDirectoryGoes()
    {
        DirectoryInfo parent = Directory.CreateTempSubdirectory("kvengine-destroy-");
        try
        {
            string path = Path.Combine(parent.FullName, "db");
            KvDb holder = KvDb.Open(path, new KvOptions());
            holder.Put(B("k"), B("v"));
            holder.Flush();
            Assert.Throws<KvLockHeldException>(() => KvDb.Destroy(path));
            Assert.True(File.Exists(Path.Combine(path, "CURRENT")));
            holder.Dispose();
            using (KvDb reopened = KvDb.Open(path, new KvOptions()))
            {
                Assert.Equal("v", S(reopened.Get(B("k"))));
            }
            KvDb.Destroy(path);
            Assert.False(Directory.Exists(path));
            Assert.True(Directory.Exists(parent.FullName));
        }
        finally
        {
            parent.Delete(recursive: true);
        }
    }

    [Theory]
    [InlineData("CURRENT", true)]
    [InlineData("IDENTITY", true)]
    [InlineData("LOCK", true)]
    [InlineData("LOG", true)]
    [InlineData("LOG.old.1700000000000000", true)]
    [InlineData("MANIFEST-000005", true)]
    [InlineData("OPTIONS-000007", true)]
    [InlineData("OPTIONS-000007.dbtmp", true)]
    [InlineData("000012.log", true)]
    [InlineData("000012.sst", true)]
    [InlineData("000012.ldb", true)]
    [InlineData("000012.blob", true)]
    [InlineData("notes.txt", false)]
    [InlineData("LOG.old.x", false)]
    [InlineData("12a.sst", false)]
    [InlineData("lost", false)]
    public void KnowsRocksDbFileNames(string name, bool expected) =>
        Assert.Equal(expected, KvEngine.Db.DbDestroyer.IsDatabaseFile(name));
}
