using System.Text.Json;

namespace KvEngine.Tool.Tests.Commands;

/// <summary>
/// kvtool backup verify on backups RocksDB 7.8's BackupEngine wrote (ldb backup) of a KvEngine
/// database: an intact backup passes, a flipped byte, a missing file or a size that differs from
/// a schema-2 meta file fails with the corruption exit code and names the file.
/// </summary>
public sealed class BackupCommandTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("kvtool-backup-").FullName;

    public void Dispose() => Directory.Delete(_root, recursive: true);

    private string BackupDir => Path.Combine(_root, "backup");

    /// <summary>A KvEngine database with tables, backed up twice by ldb (backups 1 and 2 share tables).</summary>
    private void MakeBackups()
    {
        string db = Path.Combine(_root, "db");
        using (KvDb kv = KvDb.Open(db))
        {
            for (int i = 0; i < 500; i++)
            {
                kv.Put(System.Text.Encoding.ASCII.GetBytes($"key{i:D4}"), new byte[100]);
            }
            kv.Flush();
        }
        RocksDbTools.RunOk("ldb", $"--db={db}", "backup", $"--backup_dir={BackupDir}");
        using (KvDb kv = KvDb.Open(db))
        {
            kv.Put("more"u8, "x"u8);
            kv.Flush();
        }
        RocksDbTools.RunOk("ldb", $"--db={db}", "backup", $"--backup_dir={BackupDir}");
    }

    private string ATable() => Directory.GetFiles(Path.Combine(BackupDir, "shared_checksum"), "*.sst").Order(StringComparer.Ordinal).First();

    [Fact]
    public void AnIntactBackupVerifies()
    {
        MakeBackups();
        string text = KvTool.RunOk("backup", "verify", $"--backup_dir={BackupDir}").Text;
        string[] lines = text.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal(2, lines.Length);
        Assert.StartsWith("backup 1: ", lines[0], StringComparison.Ordinal);
        Assert.EndsWith(": OK", lines[0], StringComparison.Ordinal);
        Assert.EndsWith(": OK", lines[1], StringComparison.Ordinal);

        string json = KvTool.RunOk("backup", "verify", $"--backup_dir={BackupDir}", "--backup_id=2", "--json").Text;
        using JsonDocument doc = JsonDocument.Parse(json);
        Assert.Equal(2, doc.RootElement.GetProperty("backup_id").GetInt32());
        Assert.True(doc.RootElement.GetProperty("ok").GetBoolean());
        Assert.True(doc.RootElement.GetProperty("files").GetInt32() >= 4); // a table, MANIFEST, CURRENT, OPTIONS
        Assert.True(doc.RootElement.GetProperty("bytes").GetInt64() > 0);
    }

    [Fact]
    public void AFlippedByteIsAChecksumMismatch()
    {
        MakeBackups();
        string table = ATable();
        byte[] bytes = File.ReadAllBytes(table);
        bytes[bytes.Length / 2] ^= 0x01;
        File.WriteAllBytes(table, bytes);
        ToolResult result = KvTool.Run("backup", "verify", $"--backup_dir={BackupDir}", "--json");
        Assert.Equal(ExitCodes.Corruption, result.ExitCode);
        string[] lines = result.Text.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Contains(lines, l => l.Contains("checksum mismatch", StringComparison.Ordinal) && l.Contains(Path.GetFileName(table), StringComparison.Ordinal));
        Assert.Contains("failed verification", result.Error, StringComparison.Ordinal);
    }

    [Fact]
    public void AMissingFileFails()
    {
        MakeBackups();
        File.Delete(Directory.GetFiles(Path.Combine(BackupDir, "private", "1"), "MANIFEST-*").Single());
        ToolResult result = KvTool.Run("backup", "verify", $"--backup_dir={BackupDir}");
        result.AssertOneLineFailure(ExitCodes.Corruption);
        Assert.Contains("backup 1: ", result.Text, StringComparison.Ordinal);
        Assert.Contains("missing", result.Text, StringComparison.Ordinal);
        Assert.Contains("backup 2: ", result.Text, StringComparison.Ordinal); // the other backup is still checked
    }

    [Fact]
    public void ASchemaTwoSizeMismatchFails()
    {
        MakeBackups();
        // Rewrite meta/2 in schema 2 with a size field, as newer RocksDB writes it, one size off.
        string meta = Path.Combine(BackupDir, "meta", "2");
        string[] lines = File.ReadAllLines(meta);
        var rewritten = new List<string> { "schema_version 2.1", lines[0], lines[1], lines[2] };
        foreach (string line in lines[3..])
        {
            string name = line.Split(' ')[0];
            long size = new FileInfo(Path.Combine(BackupDir, name)).Length;
            rewritten.Add($"{line} size {(name.EndsWith(".sst", StringComparison.Ordinal) ? size + 1 : size)}");
        }
        rewritten.Add("// FOOTER");
        File.WriteAllLines(meta, rewritten);
        ToolResult result = KvTool.Run("backup", "verify", $"--backup_dir={BackupDir}", "--backup_id=2");
        result.AssertOneLineFailure(ExitCodes.Corruption);
        Assert.Contains("the meta file records", result.Text, StringComparison.Ordinal);
    }

    [Fact]
    public void BadArgumentsAreUsageErrors()
    {
        KvTool.Run("backup", "verify").AssertOneLineFailure(ExitCodes.Usage);
        KvTool.Run("backup", "check", $"--backup_dir={_root}").AssertOneLineFailure(ExitCodes.Usage);
        KvTool.Run("backup", "verify", $"--backup_dir={_root}").AssertOneLineFailure(ExitCodes.Failed); // no meta directory
    }
}
