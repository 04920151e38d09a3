namespace KvEngine.Tool.Tests.Commands;

/// <summary>
/// kvtool compact, approxsize, checkpoint, repair and checkconsistency on copies of a db_bench 7.8
/// database, each result read back by ldb.
/// </summary>
public sealed class MaintenanceCommandTests : IClassFixture<DbBenchDatabase>
{
    private readonly DbBenchDatabase _db;

    public MaintenanceCommandTests(DbBenchDatabase db) => _db = db;

    private string Original => KvTool.RunOk("scan", $"--db={_db.Path}", "--hex").Text;

    [Fact]
    public void Compact_MergesLevel0IntoOneLevelWithTheSameContents()
    {
        string copy = RocksDbTools.Copy(_db.Path, "compact");
        Assert.True(Directory.GetFiles(copy, "*.sst").Length >= 3);
        ToolResult result = KvTool.RunOk("compact", $"--db={copy}");
        Assert.Empty(result.Output);
        string manifest = KvTool.RunOk("manifest_dump", $"--db={copy}").Text;
        string level0 = manifest[manifest.IndexOf("--- level 0", StringComparison.Ordinal)..manifest.IndexOf("--- level 1", StringComparison.Ordinal)];
        Assert.DoesNotContain("\n ", level0, StringComparison.Ordinal);
        Assert.Equal(Original, RocksDbTools.RunOk("ldb", $"--db={copy}", "--hex", "scan").Text);
    }

    [Fact]
    public void ApproxSize_IsWithinTenPercentOfLdbs()
    {
        string copy = RocksDbTools.Copy(_db.Path, "approx");
        RocksDbTools.RunOk("ldb", $"--db={copy}", "compact");
        string[] range = ["--from=0x0000000000000100", "--to=0x0000000000000400", "--hex"];
        long expected = long.Parse(RocksDbTools.RunOk("ldb", [$"--db={copy}", "approxsize", .. range]).Text.Trim(), System.Globalization.CultureInfo.InvariantCulture);
        long actual = long.Parse(KvTool.RunOk(["approxsize", $"--db={copy}", .. range]).Text.Trim(), System.Globalization.CultureInfo.InvariantCulture);
        Assert.True(expected > 0);
        Assert.InRange(actual, expected * 9 / 10, expected * 11 / 10);
        KvTool.Run("approxsize", $"--db={copy}").AssertOneLineFailure(ExitCodes.Usage);
    }

    [Fact]
    public void Checkpoint_IsAnOpenableCopy()
    {
        string copy = RocksDbTools.Copy(_db.Path, "checkpointsrc");
        string target = Path.Combine(_db.Root, "checkpoint");
        Assert.Equal("OK\n", KvTool.RunOk("checkpoint", $"--db={copy}", $"--checkpoint_dir={target}").Text);
        Assert.Equal(Original, RocksDbTools.RunOk("ldb", $"--db={target}", "--hex", "scan").Text);
        KvTool.Run("checkpoint", $"--db={copy}", $"--checkpoint_dir={target}").AssertOneLineFailure(ExitCodes.Failed);
    }

    [Fact]
    public void Repair_RebuildsALostManifest()
    {
        string copy = RocksDbTools.Copy(_db.Path, "repair");
        File.Delete(Path.Combine(copy, "CURRENT"));
        foreach (string m in Directory.GetFiles(copy, "MANIFEST-*"))
        {
            File.Delete(m);
        }
        KvTool.Run("scan", $"--db={copy}").AssertOneLineFailure(ExitCodes.Failed);
        ToolResult result = KvTool.RunOk("repair", $"--db={copy}", "--progress");
        Assert.Equal("OK\n", result.Text);
        Assert.Contains("repair: done", result.Error, StringComparison.Ordinal);
        Assert.Equal(Original, RocksDbTools.RunOk("ldb", $"--db={copy}", "--hex", "scan").Text);
    }

    [Fact]
    public void CheckConsistency_AgreesWithLdb()
    {
        string good = RocksDbTools.Copy(_db.Path, "consistent");
        Assert.Equal(RocksDbTools.RunOk("ldb", $"--db={good}", "checkconsistency").Text, KvTool.RunOk("checkconsistency", $"--db={_db.Path}").Text);

        string bad = RocksDbTools.Copy(_db.Path, "truncated");
        string table = Directory.GetFiles(bad, "*.sst").Order(StringComparer.Ordinal).First();
        using (var f = new FileStream(table, FileMode.Open))
        {
            f.SetLength(f.Length - 10);
        }
        Assert.NotEqual(0, RocksDbTools.Run("ldb", $"--db={RocksDbTools.Copy(bad, "ldb")}", "checkconsistency").ExitCode);
        string line = KvTool.Run("checkconsistency", $"--db={bad}").AssertOneLineFailure(ExitCodes.Corruption);
        Assert.Contains($"Sst file size mismatch: {table}", line, StringComparison.Ordinal);

        File.Delete(table);
        Assert.Contains("Can't access", KvTool.Run("checkconsistency", $"--db={bad}").AssertOneLineFailure(ExitCodes.Corruption), StringComparison.Ordinal);
    }
}
