namespace KvEngine.Tool.Tests;

/// <summary>
/// A database written by RocksDB 7.8's db_bench (fillrandom of 3000 16-byte keys with 100-byte
/// values, Snappy, 64 KiB write buffers): several flushed tables and a WAL holding the newest
/// writes, so reads go through tables, the WAL's replay and overwritten keys. Shared by a test
/// class (xUnit class fixture); tests must not change it (commands that write use a copy).
/// </summary>
public sealed class DbBenchDatabase : IDisposable
{
    public DbBenchDatabase()
    {
        Root = Directory.CreateTempSubdirectory("kvtool-test-").FullName;
        Path = System.IO.Path.Combine(Root, "db");
        RocksDbTools.RunOk("db_bench", "--benchmarks=fillrandom", "--num=3000", "--key_size=16", "--value_size=100",
            "--compression_type=snappy", "--write_buffer_size=65536", "--disable_auto_compactions=true", "--seed=1",
            $"--db={Path}", "--wal_dir=" + Path);
        Assert.NotEmpty(Directory.GetFiles(Path, "*.sst"));
        Assert.NotEmpty(Directory.GetFiles(Path, "*.log"));
    }

    public string Root { get; }

    public string Path { get; }

    public void Dispose() => Directory.Delete(Root, recursive: true);
}
