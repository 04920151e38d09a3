using KvEngine.Storage;

namespace KvEngine.Tests.Db;

/// <summary>
/// Dispose never throws (.NET's rule); Close reports a failure to persist after releasing
/// everything; neither loses a write acknowledged through the WAL.
/// </summary>
public class CloseTests
{
    private static (FaultInjectionFileSystem Fs, KvDb Db) OpenWithUnloggedWrites()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        KvDb db = KvDb.Open(DbTestUtil.DbPath, DbTestUtil.SmallOptions(fs, writeBufferSize: 1 << 20));
        db.Put("logged"u8, "1"u8, new WriteOptions { Sync = true });
        db.Put("unlogged"u8, "2"u8, new WriteOptions { DisableWal = true });
        // The close-time flush of the unlogged write cannot create its table.
        fs.ShouldFail = (op, path) => op == FileOperation.Create && path.EndsWith(".sst", StringComparison.Ordinal);
        return (fs, db);
    }

    [Fact]
    public void DisposeSwallowsAFailedCloseAndReleasesTheDatabase()
    {
        (FaultInjectionFileSystem fs, KvDb db) = OpenWithUnloggedWrites();
        db.Dispose(); // must not throw
        db.Dispose();
        Assert.Throws<ObjectDisposedException>(() => db.Get("logged"u8));
        fs.ShouldFail = null;
        using KvDb again = KvDb.Open(DbTestUtil.DbPath, DbTestUtil.SmallOptions(fs)); // the LOCK was released
        Assert.Equal("1"u8.ToArray(), again.Get("logged"u8));
    }

    [Fact]
    public void CloseReportsTheFailureOnceAndKeepsLoggedWrites()
    {
        (FaultInjectionFileSystem fs, KvDb db) = OpenWithUnloggedWrites();
        var e = Assert.Throws<KvException>(db.Close);
        Assert.Contains("Closing the database failed", e.Message, StringComparison.Ordinal);
        db.Close(); // already closed: nothing more to report
        db.Dispose();
        fs.ShouldFail = null;
        using KvDb again = KvDb.Open(DbTestUtil.DbPath, DbTestUtil.SmallOptions(fs));
        Assert.Equal("1"u8.ToArray(), again.Get("logged"u8));
    }

    [Fact]
    public async Task DisposeAsyncNeverThrows()
    {
        (FaultInjectionFileSystem fs, KvDb db) = OpenWithUnloggedWrites();
        await db.DisposeAsync();
        fs.ShouldFail = null;
        await using KvDb again = KvDb.Open(DbTestUtil.DbPath, DbTestUtil.SmallOptions(fs));
        Assert.Equal("1"u8.ToArray(), again.Get("logged"u8));
    }

    [Fact]
    public void ACleanCloseThrowsNothingAndPersistsUnloggedWrites()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        KvDb db = KvDb.Open(DbTestUtil.DbPath, DbTestUtil.SmallOptions(fs));
        db.Put("unlogged"u8, "2"u8, new WriteOptions { DisableWal = true });
        db.Close();
        using KvDb again = KvDb.Open(DbTestUtil.DbPath, DbTestUtil.SmallOptions(fs));
        Assert.Equal("2"u8.ToArray(), again.Get("unlogged"u8));
    }
}
