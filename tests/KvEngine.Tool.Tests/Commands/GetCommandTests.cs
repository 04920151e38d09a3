namespace KvEngine.Tool.Tests.Commands;

/// <summary>kvtool get and list_column_families against ldb's on the same databases.</summary>
public sealed class GetCommandTests : IClassFixture<DbBenchDatabase>
{
    private readonly DbBenchDatabase _db;

    public GetCommandTests(DbBenchDatabase db) => _db = db;

    [Fact]
    public void Get_PrintsWhatLdbPrints_ForKeysInTablesAndInTheWal()
    {
        string[] lines = KvTool.RunOk("scan", "--db", _db.Path, "--key_hex", "--no_value").Text.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        string copy = RocksDbTools.Copy(_db.Path, "ldb");
        try
        {
            foreach (string key in new[] { lines[0], lines[lines.Length / 3], lines[lines.Length / 2], lines[^1] })
            {
                foreach (string flag in new[] { "--hex", "--key_hex" })
                {
                    ToolResult ldb = RocksDbTools.RunOk("ldb", $"--db={copy}", "get", key, flag);
                    ToolResult ours = KvTool.RunOk("get", key, "--db", _db.Path, flag);
                    Assert.Equal(ldb.Output, ours.Output);
                }
            }
            ToolResult ldbMissing = RocksDbTools.Run("ldb", $"--db={copy}", "get", "0x01", "--hex");
            ToolResult missing = KvTool.Run("get", "0x01", "--db", _db.Path, "--hex");
            Assert.Equal(ldbMissing.ExitCode, missing.ExitCode);
            Assert.Contains("NotFound", missing.AssertOneLineFailure(1), StringComparison.Ordinal);
            Assert.Empty(missing.Output);
        }
        finally
        {
            Directory.Delete(copy, recursive: true);
        }
    }

    [Fact]
    public void ListColumnFamilies_PrintsWhatLdbPrints()
    {
        string dir = Path.Combine(_db.Root, "families");
        using (KvDb db = KvDb.Open(dir))
        {
            db.CreateColumnFamily("users").Dispose();
            db.CreateColumnFamily("orders").Dispose();
            db.Put("k"u8, "v"u8);
        }
        ToolResult ldb = RocksDbTools.RunOk("ldb", $"--db={dir}", "list_column_families");
        ToolResult ours = KvTool.RunOk("list_column_families", $"--db={dir}");
        Assert.Equal(ldb.Text, ours.Text);
        Assert.Contains("{default, users, orders}", ours.Text, StringComparison.Ordinal);
        Assert.Equal(RocksDbTools.RunOk("ldb", $"--db={_db.Path}", "list_column_families").Text,
            KvTool.RunOk("list_column_families", $"--db={_db.Path}").Text);
    }

    [Fact]
    public void PutDeleteAndDeleteRange_AreWhatLdbThenReads()
    {
        string dir = Path.Combine(_db.Root, "writes");
        Assert.Equal("OK\n", KvTool.RunOk("put", "--db", dir, "--create_if_missing", "a1", "v1").Text);
        KvTool.RunOk("put", "--db", dir, "0x6132", "0x7632", "--hex");
        KvTool.RunOk("put", "--db", dir, "a3", "v3");
        KvTool.RunOk("put", "--db", dir, "b1", "w1");
        KvTool.RunOk("put", "--db", dir, "b2", "w2");
        Assert.Equal("OK\n", KvTool.RunOk("delete", "--db", dir, "a1").Text);
        Assert.Equal("OK\n", KvTool.RunOk("deleterange", "--db", dir, "a3", "b2").Text);
        string copy = RocksDbTools.Copy(dir, "ldb");
        try
        {
            Assert.Equal("a2 : v2\nb2 : w2\n", RocksDbTools.RunOk("ldb", $"--db={copy}", "scan").Text);
        }
        finally
        {
            Directory.Delete(copy, recursive: true);
        }
        Assert.Equal("a2 : v2\nb2 : w2\n", KvTool.RunOk("scan", "--db", dir).Text);
        KvTool.RunOk("put", "--db", dir, "--column_family=default", "c", "x");
        Assert.Equal("x\n", KvTool.RunOk("get", "--db", dir, "c").Text);
    }
}
