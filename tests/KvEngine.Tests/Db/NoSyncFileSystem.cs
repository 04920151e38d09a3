using KvEngine.Storage;

namespace KvEngine.Tests.Db;

/// <summary>
/// The local file system (memory-mapped WAL included) with every fsync skipped: for tests that
/// open many short-lived databases on disk and never simulate a power loss
/// (<see cref="DisposeRace"/>), where the syncs of an open and a flush would take most of the time.
/// </summary>
internal sealed class NoSyncFileSystem : IFileSystem
{
    public static readonly NoSyncFileSystem Instance = new();

    private static readonly LocalFileSystem s_local = LocalFileSystem.Instance;

    public IWritableFile CreateWritable(string path) => new NoSyncFile(s_local.CreateWritable(path));

    public IWritableFile CreateLogFile(string path, bool memoryMapped) => new NoSyncFile(((IFileSystem)s_local).CreateLogFile(path, memoryMapped));

    public IRandomAccessFile OpenRandomAccess(string path) => s_local.OpenRandomAccess(path);

    public ISequentialFile OpenSequential(string path) => s_local.OpenSequential(path);

    public bool FileExists(string path) => s_local.FileExists(path);

    public long GetFileSize(string path) => s_local.GetFileSize(path);

    public void DeleteFile(string path) => s_local.DeleteFile(path);

    public void RenameFile(string from, string to) => s_local.RenameFile(from, to);

    public void LinkFile(string from, string to) => s_local.LinkFile(from, to);

    public void WriteAt(string path, long offset, ReadOnlySpan<byte> data) => s_local.WriteAt(path, offset, data);

    public void TruncateFile(string path, long length) => s_local.TruncateFile(path, length);

    public void CreateDirectory(string path) => s_local.CreateDirectory(path);

    public bool DirectoryExists(string path) => s_local.DirectoryExists(path);

    public void DeleteDirectory(string path) => s_local.DeleteDirectory(path);

    public void RenameDirectory(string from, string to) => s_local.RenameDirectory(from, to);

    public IReadOnlyList<string> GetChildren(string directory) => s_local.GetChildren(directory);

    public void SyncDirectory(string directory)
    {
    }

    public IDisposable LockFile(string path) => s_local.LockFile(path);

    /// <summary>The local file, its Sync skipped (Append, Flush, Dispose go to it: a memory-mapped WAL stays one).</summary>
    private sealed class NoSyncFile(IWritableFile inner) : IWritableFile
    {
        public long Size => inner.Size;

        public void Append(ReadOnlySpan<byte> data) => inner.Append(data);

        public void Flush() => inner.Flush();

        public void Sync()
        {
        }

        public void Dispose() => inner.Dispose();
    }
}
