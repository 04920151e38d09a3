using KvEngine.Storage;

namespace KvEngine.Tests.Storage;

public class FaultInjectionFileSystemTests
{
    private const string Dir = "/db";

    private static FaultInjectionFileSystem NewFs()
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory(Dir);
        return fs;
    }

    [Fact]
    public void LinkSharesTheBytesAndVanishesOnPowerLossUnlessTheDirectoryIsSynced()
    {
        var fs = NewFs();
        using (IWritableFile f = fs.CreateWritable("/db/a"))
        {
            f.Append(new byte[] { 1, 2, 3 });
            f.Sync();
        }
        fs.SyncDirectory(Dir);
        fs.LinkFile("/db/a", "/db/b");
        Assert.Throws<IOException>(() => fs.LinkFile("/db/a", "/db/b"));
        fs.DeleteFile("/db/a");
        Assert.Equal(3, fs.GetFileSize("/db/b"));
        fs.SimulatePowerLoss();
        Assert.True(fs.FileExists("/db/a")); // the deletion was not made durable either
        Assert.False(fs.FileExists("/db/b"));

        fs.LinkFile("/db/a", "/db/b");
        fs.SyncDirectory(Dir);
        fs.SimulatePowerLoss();
        Assert.Equal(3, fs.GetFileSize("/db/b"));
    }

    [Fact]
    public void TruncateIsDurableAndRefusesToGrowTheFile()
    {
        var fs = NewFs();
        using (IWritableFile f = fs.CreateWritable("/db/t"))
        {
            f.Append(new byte[] { 1, 2, 3, 4, 5 });
            f.Sync();
        }
        fs.SyncDirectory(Dir);
        Assert.Throws<IOException>(() => fs.TruncateFile("/db/t", 6));
        fs.TruncateFile("/db/t", 3);
        fs.SimulatePowerLoss();
        Assert.Equal(new byte[] { 1, 2, 3 }, fs.ReadAllBytes("/db/t"));
        fs.ShouldFail = (op, _) => op == FileOperation.Truncate;
        Assert.Throws<IOException>(() => fs.TruncateFile("/db/t", 1));
    }

    [Fact]
    public void PowerLossKeepsExactlyTheSyncedPrefix()
    {
        var fs = NewFs();
        var rng = new Random(7);
        using (IWritableFile f = fs.CreateWritable("/db/a"))
        {
            fs.SyncDirectory(Dir);
            int synced = 0;
            int written = 0;
            for (int i = 0; i < 200; i++)
            {
                var chunk = new byte[rng.Next(1, 50)];
                rng.NextBytes(chunk);
                f.Append(chunk);
                written += chunk.Length;
                int action = rng.Next(3);
                if (action == 1)
                {
                    f.Flush();
                }
                else if (action == 2)
                {
                    f.Sync();
                    synced = written;
                }
            }
            byte[] before = fs.ReadAllBytes("/db/a");
            fs.SimulatePowerLoss();
            byte[] after = fs.ReadAllBytes("/db/a");
            Assert.Equal(synced, after.Length);
            Assert.Equal(before.AsSpan(0, synced).ToArray(), after);
        }
    }

    [Fact]
    public void ProcessCrashKeepsFlushedButNotBufferedBytes()
    {
        var fs = NewFs();
        IWritableFile f = fs.CreateWritable("/db/a");
        f.Append(new byte[] { 1, 2, 3 });
        f.Flush();
        f.Append(new byte[] { 4 });
        fs.SimulateProcessCrash();
        Assert.Equal(new byte[] { 1, 2, 3 }, fs.ReadAllBytes("/db/a"));
        Assert.Throws<IOException>(() => f.Append(new byte[] { 5 }));
    }

    [Fact]
    public void FileCreatedWithoutDirectorySyncVanishesOnPowerLoss()
    {
        var fs = NewFs();
        using (IWritableFile f = fs.CreateWritable("/db/new"))
        {
            f.Append(new byte[] { 1 });
            f.Sync();
        }
        fs.SimulatePowerLoss();
        Assert.False(fs.FileExists("/db/new"));
    }

    [Fact]
    public void RenameRevertsUnlessDirectorySynced()
    {
        var fs = NewFs();
        fs.WriteAllBytes("/db/CURRENT", "old"u8);
        using (IWritableFile f = fs.CreateWritable("/db/tmp"))
        {
            f.Append("new"u8);
            f.Sync();
        }
        fs.RenameFile("/db/tmp", "/db/CURRENT");
        fs.SimulatePowerLoss();
        Assert.Equal("old"u8.ToArray(), fs.ReadAllBytes("/db/CURRENT"));

        using (IWritableFile f = fs.CreateWritable("/db/tmp"))
        {
            f.Append("new"u8);
            f.Sync();
        }
        fs.RenameFile("/db/tmp", "/db/CURRENT");
        fs.SyncDirectory(Dir);
        fs.SimulatePowerLoss();
        Assert.Equal("new"u8.ToArray(), fs.ReadAllBytes("/db/CURRENT"));
        Assert.False(fs.FileExists("/db/tmp"));
    }

    [Fact]
    public void InjectedErrorsAndLocks()
    {
        var fs = NewFs();
        fs.ShouldFail = (op, path) => op == FileOperation.Sync && path.EndsWith(".log", StringComparison.Ordinal);
        using IWritableFile f = fs.CreateWritable("/db/1.log");
        f.Append(new byte[] { 1 });
        Assert.Throws<IOException>(() => f.Sync());
        fs.ShouldFail = null;
        f.Sync();

        IDisposable l = fs.LockFile("/db/LOCK");
        Assert.Throws<KvLockHeldException>(() => fs.LockFile("/db/LOCK"));
        l.Dispose();
        fs.LockFile("/db/LOCK").Dispose();
    }

    [Fact]
    public void ChildrenListsOnlyDirectEntries()
    {
        var fs = NewFs();
        fs.CreateDirectory("/db/sub");
        fs.WriteAllBytes("/db/x", "1"u8);
        fs.WriteAllBytes("/db/sub/y", "2"u8);
        Assert.Equal(new[] { "x" }, fs.GetChildren(Dir));
        Assert.Throws<DirectoryNotFoundException>(() => fs.CreateWritable("/nope/f"));
    }

    [Fact]
    public void RenameDirectoryMovesEveryEntryAndItsDurability()
    {
        var fs = NewFs();
        fs.CreateDirectory("/db/stage");
        using (IWritableFile f = fs.CreateWritable("/db/stage/synced"))
        {
            f.Append(new byte[] { 1, 2 });
            f.Sync();
        }
        fs.SyncDirectory("/db/stage");
        using (IWritableFile f = fs.CreateWritable("/db/stage/unsynced-entry"))
        {
            f.Append(new byte[] { 3 });
            f.Sync();
        }
        fs.CreateDirectory("/db/taken");
        Assert.Throws<IOException>(() => fs.RenameDirectory("/db/stage", "/db/taken"));
        Assert.Throws<DirectoryNotFoundException>(() => fs.RenameDirectory("/db/missing", "/db/x"));
        fs.RenameDirectory("/db/stage", "/db/final");
        Assert.False(fs.DirectoryExists("/db/stage"));
        Assert.Equal(new[] { "synced", "unsynced-entry" }, fs.GetChildren("/db/final"));
        fs.SimulatePowerLoss();
        Assert.Equal(new[] { "synced" }, fs.GetChildren("/db/final")); // only the synced entry was durable
        Assert.Equal(new byte[] { 1, 2 }, fs.ReadAllBytes("/db/final/synced"));
    }

    [Fact]
    public void DeleteDirectoryRemovesOnlyAnEmptyOne()
    {
        var fs = NewFs();
        fs.CreateDirectory("/db/d");
        fs.WriteAllBytes("/db/d/f", new byte[] { 1 });
        Assert.Throws<IOException>(() => fs.DeleteDirectory("/db/d"));
        fs.DeleteFile("/db/d/f");
        fs.ShouldFail = (op, _) => op == FileOperation.DeleteDirectory;
        Assert.Throws<IOException>(() => fs.DeleteDirectory("/db/d"));
        fs.ShouldFail = null;
        fs.DeleteDirectory("/db/d");
        Assert.False(fs.DirectoryExists("/db/d"));
        Assert.Throws<DirectoryNotFoundException>(() => fs.DeleteDirectory("/db/d"));
    }
}
