using KvEngine.Storage;

namespace KvEngine.Tests.Storage;

public sealed class LocalFileSystemTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-fs-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Fact]
    public void LinkGivesTheFileASecondNameThatOutlivesTheFirst()
    {
        IFileSystem fs = LocalFileSystem.Instance;
        string a = Path.Combine(_dir.FullName, "a");
        string b = Path.Combine(_dir.FullName, "b");
        using (IWritableFile w = fs.CreateWritable(a))
        {
            w.Append(new byte[] { 9, 8, 7 });
            w.Sync();
        }
        fs.LinkFile(a, b);
        Assert.Throws<IOException>(() => fs.LinkFile(a, b)); // the target exists
        Assert.Throws<FileNotFoundException>(() => fs.LinkFile(Path.Combine(_dir.FullName, "missing"), Path.Combine(_dir.FullName, "c")));
        fs.DeleteFile(a);
        Assert.Equal(3, fs.GetFileSize(b));
        using IRandomAccessFile r = fs.OpenRandomAccess(b);
        var buf = new byte[3];
        Assert.Equal(3, r.Read(0, buf));
        Assert.Equal(new byte[] { 9, 8, 7 }, buf);
    }

    [Fact]
    public void TruncateCutsTheFileAndRefusesToGrowIt()
    {
        IFileSystem fs = LocalFileSystem.Instance;
        string path = Path.Combine(_dir.FullName, "t");
        using (IWritableFile w = fs.CreateWritable(path))
        {
            w.Append(new byte[] { 1, 2, 3, 4, 5 });
            w.Sync();
        }
        Assert.Throws<IOException>(() => fs.TruncateFile(path, 6));
        fs.TruncateFile(path, 2);
        Assert.Equal(new byte[] { 1, 2 }, File.ReadAllBytes(path));
        Assert.Throws<FileNotFoundException>(() => fs.TruncateFile(Path.Combine(_dir.FullName, "missing"), 0));
    }

    [Fact]
    public void WriteSyncReadBack()
    {
        IFileSystem fs = LocalFileSystem.Instance;
        string path = Path.Combine(_dir.FullName, "f");
        var big = new byte[200_000];
        new Random(1).NextBytes(big);
        using (IWritableFile w = fs.CreateWritable(path))
        {
            w.Append(new byte[] { 1, 2, 3 });
            w.Append(big);
            w.Append(new byte[] { 4 });
            Assert.Equal(big.Length + 4, w.Size);
            w.Sync();
        }
        fs.SyncDirectory(_dir.FullName);
        Assert.Equal(big.Length + 4, fs.GetFileSize(path));
        using IRandomAccessFile r = fs.OpenRandomAccess(path);
        var buf = new byte[10];
        Assert.Equal(10, r.Read(3, buf));
        Assert.Equal(big.AsSpan(0, 10).ToArray(), buf);
        Assert.Equal(1, r.Read(big.Length + 3, buf));
        Assert.Equal(0, r.Read(big.Length + 4, buf));
        using ISequentialFile s = fs.OpenSequential(path);
        s.Skip(big.Length + 3);
        Assert.Equal(1, s.Read(buf));
        Assert.Equal(4, buf[0]);
        Assert.Contains("f", fs.GetChildren(_dir.FullName));
    }

    [Fact]
    public void SecondLockFails()
    {
        string path = Path.Combine(_dir.FullName, "LOCK");
        using IDisposable l = LocalFileSystem.Instance.LockFile(path);
        Assert.Throws<KvLockHeldException>(() => LocalFileSystem.Instance.LockFile(path));
    }

    [Fact]
    public void ARecordLockHeldByAnotherOwnerIsSeenAsHeld()
    {
        string path = Path.Combine(_dir.FullName, "LOCK");
        // An open-file-description lock conflicts with a process's record lock even inside one
        // process: it stands in for RocksDB's fcntl lock held by another process. The file is
        // opened raw (a FileStream would add a flock of its own).
        File.WriteAllBytes(path, []);
        int other = PosixNative.Open(path, ORdWr);
        Assert.True(other >= 0);
        try
        {
            Assert.True(PosixNative.TryLockWholeFile(other, PosixNative.FOfdSetLk, path));
            var e = Assert.Throws<KvLockHeldException>(() => LocalFileSystem.Instance.LockFile(path));
            Assert.Contains("POSIX record lock", e.Message, StringComparison.Ordinal);
        }
        finally
        {
            _ = PosixNative.Close(other);
        }
        using IDisposable mine = LocalFileSystem.Instance.LockFile(path); // the refused attempt left nothing held
    }

    [Fact]
    public void AHeldLockKeepsItsRecordLockThroughARefusedSecondLockInTheProcess()
    {
        string path = Path.Combine(_dir.FullName, "LOCK");
        using IDisposable held = LocalFileSystem.Instance.LockFile(path);
        Assert.Throws<KvLockHeldException>(() => LocalFileSystem.Instance.LockFile(path));
        Assert.Throws<KvLockHeldException>(() => LocalFileSystem.Instance.LockFile(Path.Combine(_dir.FullName, ".", "LOCK")));
        // Had the refused attempts opened and closed the file, the process's record lock would be
        // gone and this open-file-description lock would be granted.
        int probe = PosixNative.Open(path, ORdWr);
        Assert.True(probe >= 0);
        bool granted = PosixNative.TryLockWholeFile(probe, PosixNative.FOfdSetLk, path);
        _ = PosixNative.Close(probe); // releases the record lock too (any close in the process does): last
        Assert.False(granted);
    }

    private const int ORdWr = 2;

    [Fact]
    public void SyncUsesFdatasyncAndLeavesEveryByteReadable()
    {
        string path = Path.Combine(_dir.FullName, "000001.log");
        using (IWritableFile f = LocalFileSystem.Instance.CreateWritable(path))
        {
            f.Append(new byte[100_000]);
            f.Append("tail"u8);
            f.Sync();
            byte[] onDisk = File.ReadAllBytes(path); // read while the writer is still open
            Assert.Equal(100_004, onDisk.Length);
            Assert.Equal("tail"u8.ToArray(), onDisk[^4..]);
        }
        // The binding resolves in the C library and reports errors: fd -1 is EBADF (9).
        Assert.Equal(-1, PosixNative.Fdatasync(-1));
        Assert.Equal(9, System.Runtime.InteropServices.Marshal.GetLastPInvokeError());
    }

    [Fact]
    public void DirectoriesRenameWithTheirFilesAndDeleteOnlyWhenEmpty()
    {
        IFileSystem fs = LocalFileSystem.Instance;
        string stage = Path.Combine(_dir.FullName, "stage");
        string final = Path.Combine(_dir.FullName, "final");
        fs.CreateDirectory(stage);
        using (IWritableFile w = fs.CreateWritable(Path.Combine(stage, "f")))
        {
            w.Append(new byte[] { 5 });
        }
        fs.RenameDirectory(stage, final);
        Assert.False(fs.DirectoryExists(stage));
        Assert.Equal(1, fs.GetFileSize(Path.Combine(final, "f")));
        Assert.Throws<IOException>(() => fs.DeleteDirectory(final));
        fs.DeleteFile(Path.Combine(final, "f"));
        fs.DeleteDirectory(final);
        Assert.False(fs.DirectoryExists(final));
    }
}
