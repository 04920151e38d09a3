using System.Text;

namespace KvEngine.Tool.Tests.Commands;

/// <summary>kvtool sst against sst_dump 7.8 on the tables of a db_bench database and of a KvEngine database.</summary>
public sealed class SstCommandTests : IClassFixture<DbBenchDatabase>
{
    private readonly DbBenchDatabase _db;

    public SstCommandTests(DbBenchDatabase db) => _db = db;

    public static TheoryData<string[], string[]> Commands => new()
    {
        { ["--command=scan", "--output_hex"], ["sst", "scan", "--output_hex"] },
        { ["--command=scan", "--output_hex", "--read_num=5"], ["sst", "scan", "--output_hex", "--read_num=5"] },
        { ["--command=scan", "--output_hex", "--input_key_hex", "--from=0x0000000000000200", "--to=0x0000000000000500"],
            ["sst", "--command=scan", "--output_hex", "--input_key_hex", "--from=0x0000000000000200", "--to=0x0000000000000500"] },
        { ["--command=check"], ["sst", "check"] },
        { ["--command=verify"], ["sst", "verify"] },
        { ["--command=none", "--show_properties"], ["sst", "properties"] },
        { ["--command=scan", "--output_hex", "--show_properties"], ["sst", "--command=scan", "--output_hex", "--show_properties"] },
    };

    [Theory]
    [MemberData(nameof(Commands))]
    public void DbBenchTables_PrintWhatSstDumpPrints(string[] sstDumpArgs, string[] kvtoolArgs)
    {
        string[] tables = Directory.GetFiles(_db.Path, "*.sst");
        Assert.True(tables.Length >= 3);
        foreach (string table in tables)
        {
            AssertSameAsSstDump(table, sstDumpArgs, kvtoolArgs);
        }
    }

    [Fact]
    public void KvEngineTablesWithEveryEntryType_PrintWhatSstDumpPrints()
    {
        string dir = Path.Combine(_db.Root, "kvengine-types");
        using (KvDb db = KvDb.Open(dir, new KvOptions { MergeOperator = new StringAppendOperator((byte)',') }))
        {
            for (int i = 0; i < 200; i++)
            {
                db.Put(Encoding.ASCII.GetBytes($"key{i:D4}"), Encoding.ASCII.GetBytes($"value{i}"));
            }
            db.Delete("key0003"u8);
            db.SingleDelete("single-deleted"u8);
            db.Merge("merge-only"u8, "m1"u8);
            db.DeleteRange("key0100"u8, "key0150"u8);
            db.Put("key\0nul"u8, "v\0"u8);
            db.Flush();
        }
        string table = Assert.Single(Directory.GetFiles(dir, "*.sst"));
        foreach ((string[] sstDumpArgs, string[] kvtoolArgs) in new[]
        {
            (new[] { "--command=scan", "--output_hex" }, new[] { "sst", "scan", "--output_hex" }),
            (["--command=none", "--show_properties"], ["sst", "properties"]),
            (["--command=verify"], ["sst", "verify"]),
        })
        {
            AssertSameAsSstDump(table, sstDumpArgs, kvtoolArgs);
        }
        string scan = KvTool.RunOk("sst", "scan", "--output_hex", $"--file={table}").Text;
        Assert.Contains($"'{Hex("key0003")}' seq:", scan, StringComparison.Ordinal);
        Assert.Contains(", type:0 => ", scan, StringComparison.Ordinal);
        Assert.Contains(", type:7 => ", scan, StringComparison.Ordinal);
        Assert.Contains(", type:2 => ", scan, StringComparison.Ordinal);
        string dump = KvTool.RunOk("sst", "dump", "--output_hex", $"--file={table}").Text;
        Assert.Contains($"'{Hex("key0100")}' seq:", dump, StringComparison.Ordinal);
        Assert.Contains($", type:15 => {Hex("key0150")}", dump, StringComparison.Ordinal);
    }

    [Fact]
    public void CorruptedTable_FailsVerifyWithExitCode3AndOneLine()
    {
        string table = Directory.GetFiles(_db.Path, "*.sst").Order(StringComparer.Ordinal).First();
        string dir = Path.Combine(_db.Root, "corrupt");
        Directory.CreateDirectory(dir);
        string bad = Path.Combine(dir, Path.GetFileName(table));
        File.Copy(table, bad);
        byte[] bytes = File.ReadAllBytes(bad);
        bytes[100] ^= 0x40; // inside the first data block
        File.WriteAllBytes(bad, bytes);
        // sst_dump 7.8's verify checks block checksums only with --verify_checksum; kvtool's always does.
        Assert.Contains("is corrupted: Corruption: block checksum mismatch",
            RocksDbTools.Run("sst_dump", $"--file={bad}", "--command=verify", "--verify_checksum").Error, StringComparison.Ordinal);

        string line = KvTool.Run("sst", "verify", $"--file={bad}").AssertOneLineFailure(ExitCodes.Corruption);
        Assert.Contains(bad, line, StringComparison.Ordinal);
        Assert.Contains("Corruption", line, StringComparison.Ordinal);
        KvTool.Run("sst", "scan", $"--file={bad}").AssertOneLineFailure(ExitCodes.Corruption);

        string notATable = Path.Combine(dir, "000999.sst");
        File.WriteAllText(notATable, "this is not a table, but it is long enough to hold a footer of a table file");
        KvTool.Run("sst", "properties", $"--file={notATable}").AssertOneLineFailure(ExitCodes.Corruption);
        KvTool.Run("sst", "verify", $"--file={Path.Combine(dir, "missing.sst")}").AssertOneLineFailure(ExitCodes.Failed);
    }

    [Fact]
    public void RawCommand_WritesTheDumpNextToTheTable()
    {
        string dir = Path.Combine(_db.Root, "raw");
        Directory.CreateDirectory(dir);
        string table = Path.Combine(dir, "000001.sst");
        File.Copy(Directory.GetFiles(_db.Path, "*.sst")[0], table);
        string output = KvTool.RunOk("sst", $"--file={table}", "--command=raw").Text;
        string dumpFile = Path.Combine(dir, "000001_dump.txt");
        Assert.Contains($"raw dump written to file {dumpFile}", output, StringComparison.Ordinal);
        string dump = File.ReadAllText(dumpFile);
        Assert.Contains("format version: 5", dump, StringComparison.Ordinal);
        string entries = KvTool.RunOk("sst", "scan", "--output_hex", $"--file={table}").Text;
        foreach (string entry in entries.Split('\n').Where(l => l.StartsWith('\'')))
        {
            Assert.Contains("  " + entry + "\n", dump, StringComparison.Ordinal);
        }
    }

    private static void AssertSameAsSstDump(string table, string[] sstDumpArgs, string[] kvtoolArgs)
    {
        ToolResult expected = RocksDbTools.RunOk("sst_dump", [$"--file={table}", .. sstDumpArgs]);
        ToolResult actual = KvTool.RunOk([.. kvtoolArgs, $"--file={table}"]);
        Assert.Equal(WithoutEnvLine(expected.Text), actual.Text);
    }

    // sst_dump's first line prints a pointer ("options.env is 0x55d0...").
    private static string WithoutEnvLine(string text) =>
        string.Concat(text.Split('\n').Where(l => !l.StartsWith("options.env is ", StringComparison.Ordinal)).Select(l => l + "\n"))[..^1];

    private static string Hex(string text) => Convert.ToHexString(Encoding.ASCII.GetBytes(text));
}
