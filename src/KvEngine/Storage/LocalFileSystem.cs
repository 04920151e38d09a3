using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;

namespace KvEngine.Storage;

/// <summary>
/// The operating system's file system: positional I/O on <see cref="SafeFileHandle"/>, fsync via
/// <see cref="RandomAccess.FlushToDisk"/>, directory fsync through libc on Unix. Thread-safe.
/// </summary>
internal sealed class LocalFileSystem : IFileSystem
{
    public static readonly LocalFileSystem Instance = new();

    public IWritableFile CreateWritable(string path) => new LocalWritableFile(path);

    /// <summary>
    /// Mapped only on 64-bit Linux (where posix_fallocate and mmap come from the C library every .NET
    /// process has loaded); elsewhere, or where the file system cannot map files, a plain file.
    /// </summary>
    public IWritableFile CreateLogFile(string path, bool memoryMapped) =>
        memoryMapped && OperatingSystem.IsLinux() && Environment.Is64BitProcess
            ? LocalMappedWritableFile.TryCreate(path) ?? (IWritableFile)new LocalWritableFile(path)
            : new LocalWritableFile(path);

    public IRandomAccessFile OpenRandomAccess(string path) => new LocalRandomAccessFile(path);

    public IRandomAccessFile OpenRandomAccess(string path, bool useDirectIO) =>
        useDirectIO ? new LocalDirectRandomAccessFile(path) : new LocalRandomAccessFile(path);

    public IRandomAccessFile OpenRandomAccess(string path, bool useDirectIO, bool adviseRandom) =>
        useDirectIO ? new LocalDirectRandomAccessFile(path) : new LocalRandomAccessFile(path, adviseRandom: adviseRandom);

    public IWritableFile CreateWritable(string path, bool useDirectIO) =>
        useDirectIO ? new LocalDirectWritableFile(path) : new LocalWritableFile(path);

    public void CheckDirectIO(string path) => DirectIO.Probe(path);

    public ISequentialFile OpenSequential(string path) => new LocalSequentialFile(path);

    public bool FileExists(string path) => File.Exists(path);

    public long GetFileSize(string path) => new FileInfo(path).Length;

    public void DeleteFile(string path) => File.Delete(path);

    public void RenameFile(string from, string to) => File.Move(from, to, overwrite: true);

    public void LinkFile(string from, string to)
    {
        if (OperatingSystem.IsWindows())
        {
            if (!WindowsNative.CreateHardLink(to, from, IntPtr.Zero))
            {
                throw new IOException($"Cannot link '{from}' to '{to}' (Win32 error {Marshal.GetLastPInvokeError()}).");
            }
            return;
        }
        if (PosixNative.Link(from, to) != 0)
        {
            int errno = Marshal.GetLastPInvokeError();
            if (errno == ENoEnt)
            {
                throw new FileNotFoundException($"Cannot link '{from}' to '{to}': no such file (errno {errno}).", from);
            }
            throw new IOException($"Cannot link '{from}' to '{to}' (errno {errno}).");
        }
    }

    private const int ENoEnt = 2;

    public void WriteAt(string path, long offset, ReadOnlySpan<byte> data)
    {
        using SafeFileHandle handle = File.OpenHandle(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite | FileShare.Delete);
        if (offset < 0 || offset + data.Length > RandomAccess.GetLength(handle))
        {
            throw new IOException($"Cannot overwrite {data.Length} bytes at {offset} in '{path}': past the end of the file.");
        }
        RandomAccess.Write(handle, data, offset);
        RandomAccess.FlushToDisk(handle);
    }

    public void TruncateFile(string path, long length)
    {
        using SafeFileHandle handle = File.OpenHandle(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite | FileShare.Delete);
        if (length < 0 || length > RandomAccess.GetLength(handle))
        {
            throw new IOException($"Cannot truncate '{path}' to {length} bytes: past the end of the file.");
        }
        RandomAccess.SetLength(handle, length);
        RandomAccess.FlushToDisk(handle);
    }

    public void CreateDirectory(string path) => Directory.CreateDirectory(path);

    public bool DirectoryExists(string path) => Directory.Exists(path);

    public void DeleteDirectory(string path) => Directory.Delete(path, recursive: false);

    public void RenameDirectory(string from, string to) => Directory.Move(from, to);

    public IReadOnlyList<string> GetChildren(string directory)
    {
        var names = new List<string>();
        foreach (string p in Directory.EnumerateFileSystemEntries(directory))
        {
            names.Add(Path.GetFileName(p));
        }
        return names;
    }

    public void SyncDirectory(string directory)
    {
        if (OperatingSystem.IsWindows())
        {
            return; // NTFS metadata is journaled; directories cannot be opened for flushing.
        }
        int fd = PosixNative.Open(directory, PosixNative.ORdOnly | PosixNative.ODirectory);
        if (fd < 0)
        {
            throw new IOException($"Cannot open directory '{directory}' to sync it (errno {Marshal.GetLastPInvokeError()}).");
        }
        try
        {
            if (PosixNative.Fsync(fd) != 0)
            {
                throw new IOException($"fsync of directory '{directory}' failed (errno {Marshal.GetLastPInvokeError()}).");
            }
        }
        finally
        {
            _ = PosixNative.Close(fd);
        }
    }

    private const int EWouldBlock = 11; // Linux EAGAIN/EWOULDBLOCK, which .NET reports as the HResult
    private const int SharingViolation = unchecked((int)0x80070020);

    /// <summary>
    /// Locks <paramref name="path"/> (created if absent) against every other holder, KvEngine's and
    /// RocksDB's alike, until the returned handle is disposed. Two locks on one open file:
    /// <list type="bullet">
    /// <item>flock(LOCK_EX | LOCK_NB), which .NET takes for <see cref="FileShare.None"/>: it keeps out a
    /// second open in this process as well as in others (flock locks belong to the open file);</item>
    /// <item>on Linux, a POSIX record lock, fcntl(F_SETLK, F_WRLCK) over the whole file, the lock
    /// RocksDB's <c>LockFile</c> takes: without it a RocksDB process (ldb, db_bench, a service)
    /// and KvEngine could open one database at once, since flock and fcntl locks do not see each
    /// other. Record locks belong to the process and are released when any descriptor of the file
    /// in the process closes, so a second lock of the same path in this process is refused before
    /// the file is opened (<see cref="LocalFileLock"/>).</item>
    /// </list>
    /// </summary>
    /// <exception cref="KvLockHeldException">Another instance or process holds either lock.</exception>
    public IDisposable LockFile(string path) => LocalFileLock.Acquire(path, OpenAndLock);

    private static FileStream OpenAndLock(string path)
    {
        FileStream stream;
        try
        {
            stream = new FileStream(path, FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.None);
        }
        catch (IOException e) when (e.GetType() == typeof(IOException) && e.HResult is EWouldBlock or SharingViolation)
        {
            // Only a refused flock (Unix: EWOULDBLOCK as the HResult) or a Windows sharing
            // violation means "held"; a lock file that cannot be created or opened at all (access
            // denied, no such directory, no space) keeps the file system's own exception.
            throw new KvLockHeldException($"Lock file '{path}' is held by another process or instance: {e.Message}", e);
        }
        if (!OperatingSystem.IsLinux())
        {
            return stream;
        }
        try
        {
            int fd = (int)stream.SafeFileHandle.DangerousGetHandle();
            if (!PosixNative.TryLockWholeFile(fd, PosixNative.FSetLk, path))
            {
                throw new KvLockHeldException($"Lock file '{path}' is held by another process (a POSIX record lock, as RocksDB takes).");
            }
        }
        catch
        {
            stream.Dispose();
            throw;
        }
        return stream;
    }
}
