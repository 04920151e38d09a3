using System.Text;
using System.Text.RegularExpressions;

namespace KvEngine.Tool.Tests.Commands;

/// <summary>kvtool manifest_dump and dump_wal against ldb's on db_bench's database and on KvEngine's.</summary>
public sealed partial class DumpCommandTests : IClassFixture<DbBenchDatabase>
{
    private readonly DbBenchDatabase _db;

    public DumpCommandTests(DbBenchDatabase db) => _db = db;

    [Theory]
    [InlineData("--hex")]
    [InlineData]
    public void ManifestDump_PrintsWhatLdbPrints(params string[] flags)
    {
        string expected = WithoutDeepLevels(RocksDbTools.RunOk("ldb", [$"--db={_db.Path}", "manifest_dump", .. flags]).Text);
        Assert.Matches(@"\n \d+:\d+\[\d+ \.\. \d+\]\['", expected);
        Assert.Equal(expected, KvTool.RunOk(["manifest_dump", $"--db={_db.Path}", .. flags]).Text);

        string kvDb = KvEngineDatabase("manifest" + flags.Length);
        Assert.Equal(WithoutDeepLevels(RocksDbTools.RunOk("ldb", $"--db={kvDb}", "manifest_dump", "--hex").Text),
            KvTool.RunOk("manifest_dump", $"--db={kvDb}", "--hex").Text);
    }

    [Fact]
    public void ManifestDumpOfAFile_AndJson_DescribeTheSameTables()
    {
        string manifest = Directory.GetFiles(_db.Path, "MANIFEST-*").Single();
        string byDb = KvTool.RunOk("manifest_dump", $"--db={_db.Path}").Text;
        Assert.Equal(byDb, KvTool.RunOk("manifest_dump", $"--path={manifest}").Text);
        using var json = System.Text.Json.JsonDocument.Parse(KvTool.RunOk("manifest_dump", $"--db={_db.Path}", "--json").Text);
        System.Text.Json.JsonElement level0 = json.RootElement.GetProperty("column_families")[0].GetProperty("levels")[0];
        Assert.Equal(Directory.GetFiles(_db.Path, "*.sst").Length, level0.GetArrayLength());
        foreach (System.Text.Json.JsonElement table in level0.EnumerateArray())
        {
            Assert.Contains($" {table.GetProperty("file_number").GetUInt64()}:{table.GetProperty("file_size").GetUInt64()}[", byDb, StringComparison.Ordinal);
        }
        string verbose = KvTool.RunOk("manifest_dump", $"--db={_db.Path}", "--verbose").Text;
        Assert.StartsWith($"Processing Manifest file {manifest}\nVersionEdit {{", verbose, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData]
    [InlineData("--print_value")]
    [InlineData("--print_value", "--header")]
    public void DumpWal_PrintsWhatLdbPrints(params string[] flags)
    {
        string[] logs = Directory.GetFiles(_db.Path, "*.log");
        Assert.NotEmpty(logs);
        foreach (string log in logs.Append(Directory.GetFiles(KvEngineDatabase("wal" + flags.Length), "*.log").Single()))
        {
            ToolResult expected = RocksDbTools.RunOk("ldb", ["dump_wal", $"--walfile={log}", .. flags]);
            Assert.NotEmpty(expected.Output);
            Assert.Equal(expected.Text, KvTool.RunOk(["dump_wal", $"--walfile={log}", .. flags]).Text);
        }
    }

    [Fact]
    public void DumpWalOfKvEngine_ShowsEveryOperationType()
    {
        string log = Directory.GetFiles(KvEngineDatabase("types"), "*.log").Single();
        string text = KvTool.RunOk("dump_wal", $"--walfile={log}", "--print_value").Text;
        foreach (string op in new[] { "PUT(0) : ", "PUT(1) : ", "DELETE(0) : ", "SINGLE_DELETE(0) : ", "DELETE_RANGE(0) : ", "MERGE(0) : " })
        {
            Assert.Contains(op, text, StringComparison.Ordinal);
        }
        string[] json = KvTool.RunOk("dump_wal", $"--walfile={log}", "--json").Text.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal(text.Split('\n', StringSplitOptions.RemoveEmptyEntries).Length, json.Length);
    }

    [Fact]
    public void DamagedWalOrManifest_FailsWithOneLine()
    {
        string dir = KvEngineDatabase("damaged");
        string log = Directory.GetFiles(dir, "*.log").Single();
        byte[] bytes = File.ReadAllBytes(log);
        bytes[20] ^= 0x01; // inside the first record's payload: its CRC no longer matches
        File.WriteAllBytes(log, bytes);
        KvTool.Run("dump_wal", $"--walfile={log}").AssertOneLineFailure(ExitCodes.Corruption);
        KvTool.Run("dump_wal", $"--walfile={log}.missing").AssertOneLineFailure(ExitCodes.Failed);
        string manifest = Directory.GetFiles(dir, "MANIFEST-*").Single();
        byte[] m = File.ReadAllBytes(manifest);
        m[10] ^= 0x01;
        File.WriteAllBytes(manifest, m);
        KvTool.Run("manifest_dump", $"--db={dir}").AssertOneLineFailure(ExitCodes.Corruption);
        KvTool.Run("manifest_dump", $"--db={Path.Combine(dir, "nothing")}").AssertOneLineFailure(ExitCodes.Failed);
    }

    // A KvEngine database with two families, a flushed table and every operation type left in its WAL.
    private string KvEngineDatabase(string name)
    {
        string dir = Path.Combine(_db.Root, "kv-" + name);
        var options = new KvOptions { MergeOperator = new StringAppendOperator((byte)',') };
        using KvDb db = KvDb.Open(dir, options);
        using ColumnFamilyHandle users = db.CreateColumnFamily("users", new ColumnFamilyOptions { MergeOperator = options.MergeOperator });
        for (int i = 0; i < 50; i++)
        {
            db.Put(Encoding.ASCII.GetBytes($"flushed{i:D3}"), Encoding.ASCII.GetBytes($"v{i}"));
        }
        db.Flush();
        using (var batch = new WriteBatch())
        {
            batch.Put("b1"u8, "x"u8);
            batch.Put(users, "u1"u8, "alice"u8);
            batch.Delete("gone"u8);
            db.Write(batch);
        }
        db.SingleDelete("single"u8);
        db.DeleteRange("a"u8, "b"u8);
        db.Merge("m"u8, "op1"u8);
        db.Put("k\0ey"u8, "\0value"u8);
        return dir;
    }

    private static string WithoutDeepLevels(string ldbOutput) => DeepLevel().Replace(ldbOutput, "");

    // ldb opens with num_levels 64 and lists every level; KvEngine has 7.
    [GeneratedRegex(@"--- level ([7-9]|[1-6][0-9]) --- version# [0-9]+ ---\n")]
    private static partial Regex DeepLevel();
}
