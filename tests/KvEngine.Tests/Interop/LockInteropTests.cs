using KvEngine.Tests.Table;

namespace KvEngine.Tests.Interop;

/// <summary>
/// A database KvEngine has open is locked against RocksDB's tools too: ldb takes RocksDB's POSIX
/// record lock on LOCK, which a flock alone does not stop, and two writers on one directory would
/// interleave WALs, MANIFESTs and file numbers.
/// </summary>
public sealed class LockInteropTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-interop-lock-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Fact]
    public void LdbCannotWriteADatabaseKvEngineHasOpen()
    {
        string db = Path.Combine(_dir.FullName, "db");
        using (KvDb kv = KvDb.Open(db))
        {
            kv.Put("k"u8, "ours"u8);
            // A second instance in this process is refused, and its refusal must not release the
            // first instance's record lock.
            Assert.Throws<KvLockHeldException>(() => KvDb.Open(db));
            var (exitCode, stdout, stderr) = RocksDbTools.Run("ldb", [$"--db={db}", "put", "k", "theirs"]);
            Assert.NotEqual(0, exitCode);
            Assert.Contains("lock", stdout + stderr, StringComparison.OrdinalIgnoreCase);
            Assert.Equal("ours"u8.ToArray(), kv.Get("k"u8));
        }
        // Closed: ldb may take the database now.
        var after = RocksDbTools.Run("ldb", [$"--db={db}", "put", "k", "theirs"]);
        Assert.True(after.ExitCode == 0, after.Stdout + after.Stderr);
    }
}
