namespace KvEngine.Tool.Tests.Commands;

/// <summary>kvtool scan against ldb scan on the same db_bench 7.8 database, byte for byte.</summary>
public sealed class ScanCommandTests : IClassFixture<DbBenchDatabase>
{
    private readonly DbBenchDatabase _db;

    public ScanCommandTests(DbBenchDatabase db) => _db = db;

    [Theory]
    [InlineData("--hex")]
    [InlineData("--key_hex")]
    [InlineData("--key_hex", "--value_hex")]
    [InlineData("--hex", "--no_value")]
    [InlineData("--hex", "--max_keys=17")]
    [InlineData("--hex", "--from=0x0000000000000100", "--to=0x0000000000000400")]
    [InlineData("--hex", "--from=0x00000000000003E8303030303030303030")]
    [InlineData("--key_hex", "--to=0x0000000000000050", "--no_value")]
    public void Scan_PrintsWhatLdbPrints(params string[] flags)
    {
        string copy = RocksDbTools.Copy(_db.Path, "ldb");
        try
        {
            ToolResult ldb = RocksDbTools.RunOk("ldb", [$"--db={copy}", "scan", .. flags]);
            ToolResult ours = KvTool.RunOk(["scan", "--db", _db.Path, .. flags]);
            Assert.True(ldb.Output.Length > 0);
            Assert.Equal(ldb.Text, ours.Text);
            Assert.Equal(ldb.Output, ours.Output);
        }
        finally
        {
            Directory.Delete(copy, recursive: true);
        }
    }

    [Fact]
    public void Scan_LeavesTheDatabaseUnchanged()
    {
        var before = Directory.GetFiles(_db.Path).Where(f => !f.EndsWith("LOCK", StringComparison.Ordinal))
            .ToDictionary(f => f, File.ReadAllBytes);
        KvTool.RunOk("scan", "--db", _db.Path, "--hex");
        var after = Directory.GetFiles(_db.Path).Where(f => !f.EndsWith("LOCK", StringComparison.Ordinal)).ToArray();
        Assert.Equal(before.Keys.Order(), after.Order());
        foreach (string f in after)
        {
            Assert.Equal(before[f], File.ReadAllBytes(f));
        }
    }

    [Fact]
    public void ScanJson_WritesOneObjectPerPairInHex()
    {
        string text = KvTool.RunOk("scan", "--db", _db.Path, "--max_keys=3", "--json").Text;
        string hex = KvTool.RunOk("scan", "--db", _db.Path, "--max_keys=3", "--hex").Text;
        string[] lines = text.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        string[] expected = hex.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal(3, lines.Length);
        for (int i = 0; i < 3; i++)
        {
            using var doc = System.Text.Json.JsonDocument.Parse(lines[i]);
            string[] kv = expected[i].Split(" : ");
            Assert.Equal(kv[0], doc.RootElement.GetProperty("key").GetString());
            Assert.Equal(kv[1], doc.RootElement.GetProperty("value").GetString());
        }
    }

    [Fact]
    public void ScanProgress_ReportsTheCountOnStderrOnly()
    {
        ToolResult plain = KvTool.RunOk("scan", "--db", _db.Path, "--hex");
        ToolResult withProgress = KvTool.RunOk("scan", "--db", _db.Path, "--hex", "--progress");
        Assert.Equal(plain.Output, withProgress.Output);
        int entries = plain.Text.Split('\n', StringSplitOptions.RemoveEmptyEntries).Length;
        Assert.Contains($"scan: {entries} entries", withProgress.Error, StringComparison.Ordinal);
        Assert.Equal("", plain.Error);
    }
}
