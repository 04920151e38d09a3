using KvEngine.Storage;

namespace KvEngine.Tests.Db;

/// <summary>
/// Opening reports every failure as <see cref="KvException"/>, and says "LOCK is held" only when
/// another instance holds it, not when the LOCK file cannot be made at all.
/// </summary>
public class OpenErrorTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-open-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Fact]
    public void ASecondInstanceIsToldTheLockIsHeld()
    {
        string path = Path.Combine(_dir.FullName, "db");
        using KvDb first = KvDb.Open(path);
        var e = Assert.Throws<KvLockHeldException>(() => KvDb.Open(path));
        Assert.Contains("LOCK is held", e.Message, StringComparison.Ordinal);
        Assert.Equal(KvStatusCode.IOError, e.StatusCode);
    }

    [Fact]
    public void ALockFileThatCannotBeCreatedIsNotReportedAsHeld()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        fs.ShouldFail = (op, _) => op == FileOperation.Lock;
        var e = Assert.Throws<KvException>(() => KvDb.Open(DbTestUtil.DbPath, DbTestUtil.SmallOptions(fs)));
        Assert.DoesNotContain("is held", e.Message, StringComparison.Ordinal);
        Assert.Contains("LOCK file could not be created", e.Message, StringComparison.Ordinal);
        fs.ShouldFail = null;
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, DbTestUtil.SmallOptions(fs)); // nothing was left held
    }

    [Fact]
    public void ADirectoryTheProcessMayNotWriteGivesKvException()
    {
        // sysfs refuses new entries even to root, so this holds whoever runs the tests.
        const string path = "/sys/kvengine-test-db";
        Assert.True(OperatingSystem.IsLinux(), "the engine's tests run on Linux");
        var e = Assert.Throws<KvException>(() => KvDb.Open(path));
        Assert.IsType<UnauthorizedAccessException>(e.InnerException);
        Assert.Contains(path, e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ALockFileThatIsADirectoryIsNotReportedAsHeld()
    {
        string path = Path.Combine(_dir.FullName, "db");
        Directory.CreateDirectory(Path.Combine(path, "LOCK"));
        var e = Assert.Throws<KvException>(() => KvDb.Open(path));
        Assert.DoesNotContain("is held", e.Message, StringComparison.Ordinal);
    }
}
