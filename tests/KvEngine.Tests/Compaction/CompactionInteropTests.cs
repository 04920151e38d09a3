using System.Text;
using KvEngine.Tests.Wal;

namespace KvEngine.Tests.Compaction;

/// <summary>
/// RocksDB 7.8's tools read what compaction wrote: every table passes
/// <c>sst_dump --command=check --verify_checksum</c>, <c>ldb checkconsistency</c> accepts the
/// MANIFEST, and <c>ldb scan</c> of a copy lists exactly our contents.
/// </summary>
public sealed class CompactionInteropTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-compaction-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Fact]
    public void RocksDbToolsAcceptCompactedDatabase()
    {
        string path = Path.Combine(_dir.FullName, "db");
        KvOptions options = CompactionTestUtil.Tiny(KvEngine.Storage.LocalFileSystem.Instance);
        var model = new SortedDictionary<string, string>(StringComparer.Ordinal);
        var rng = new Random(77);
        using (KvDb db = KvDb.Open(path, options))
        {
            for (int i = 0; i < 12000; i++)
            {
                string key = $"key{rng.Next(1500):D5}";
                if (rng.Next(6) == 0)
                {
                    db.Delete(Encoding.ASCII.GetBytes(key));
                    model.Remove(key);
                }
                else
                {
                    var chars = new char[rng.Next(10, 90)];
                    for (int c = 0; c < chars.Length; c++)
                    {
                        chars[c] = (char)('a' + rng.Next(26));
                    }
                    string value = $"value{i}-{new string(chars)}";
                    db.Put(Encoding.ASCII.GetBytes(key), Encoding.ASCII.GetBytes(value));
                    model[key] = value;
                }
            }
            // Writes may outrun compaction on a loaded machine: count once the backlog is done.
            CompactionTestUtil.WaitForCompactions(db);
            Assert.True(db.Counters.Compactions > 8, $"only {db.Counters.Compactions} compactions ran");
            Assert.True(CompactionTestUtil.Files(db, 2) > 0, "nothing reached level 2");
        }

        string[] tables = Directory.GetFiles(path, "*.sst");
        Assert.NotEmpty(tables);
        foreach (string table in tables)
        {
            (int code, string stdout, string stderr) = RocksDbTools.Run("sst_dump", null, $"--file={table}", "--command=check", "--verify_checksum");
            Assert.True(code == 0 && !stderr.Contains("Corruption", StringComparison.Ordinal) && !stdout.Contains("Corruption", StringComparison.Ordinal),
                $"sst_dump {Path.GetFileName(table)}: {stderr}{stdout}");
        }

        string copy = Path.Combine(_dir.FullName, "copy");
        Directory.CreateDirectory(copy);
        foreach (string f in Directory.GetFiles(path))
        {
            if (Path.GetFileName(f) != "LOCK")
            {
                File.Copy(f, Path.Combine(copy, Path.GetFileName(f)));
            }
        }
        RocksDbTools.RunOk("ldb", $"--db={copy}", "checkconsistency");
        string scan = RocksDbTools.RunOk("ldb", $"--db={copy}", "scan");
        var expected = new StringBuilder();
        foreach (KeyValuePair<string, string> e in model)
        {
            expected.Append(e.Key).Append(" : ").Append(e.Value).Append('\n');
        }
        Assert.Equal(expected.ToString(), scan);
    }
}
