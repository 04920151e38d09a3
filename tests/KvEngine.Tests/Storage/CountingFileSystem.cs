using System.Collections.Concurrent;
using KvEngine.Storage;
using KvEngine.Storage.IO;

namespace KvEngine.Tests.Storage;

/// <summary>
/// The local file system, recording every positional read of a file opened for random access
/// (path, offset, length asked, whether opened with direct I/O) and every file created with
/// direct I/O, for tests that count the reads the engine issues. Asynchronous reads are recorded
/// apart (<see cref="AsyncReads"/>), go through the block-read engine given (else the shared one)
/// and first await <see cref="BeforeAsyncRead"/> when set, so a test can hold a read in flight.
/// Thread-safe.
/// </summary>
internal sealed class CountingFileSystem(IBlockReadEngine? engine = null) : IFileSystem
{
    private static readonly IFileSystem s_local = LocalFileSystem.Instance;

    public ConcurrentQueue<(string Path, long Offset, int Length, bool Direct)> Reads { get; } = new();

    public ConcurrentQueue<(string Path, long Offset, int Length, bool Direct)> AsyncReads { get; } = new();

    /// <summary>Awaited by every asynchronous read before it reaches the engine (null: none).</summary>
    public Func<HeldRead, Task>? BeforeAsyncRead { get; set; }

    /// <summary>Called when an asynchronous read has its bytes, just before it completes (null: none).</summary>
    public Action<HeldRead>? AfterAsyncRead { get; set; }

    public ConcurrentQueue<string> DirectWrites { get; } = new();

    /// <summary>Reads of files whose name ends with <paramref name="suffix"/>, in issue order.</summary>
    public List<(string Path, long Offset, int Length, bool Direct)> ReadsOf(string suffix) =>
        Reads.Where(r => r.Path.EndsWith(suffix, StringComparison.Ordinal)).ToList();

    public IWritableFile CreateWritable(string path) => s_local.CreateWritable(path);

    public IWritableFile CreateWritable(string path, bool useDirectIO)
    {
        if (useDirectIO)
        {
            DirectWrites.Enqueue(path);
        }
        return s_local.CreateWritable(path, useDirectIO);
    }

    public IWritableFile CreateLogFile(string path, bool memoryMapped) => s_local.CreateLogFile(path, memoryMapped);

    public IRandomAccessFile OpenRandomAccess(string path) => OpenRandomAccess(path, useDirectIO: false);

    public IRandomAccessFile OpenRandomAccess(string path, bool useDirectIO) =>
        new CountingFile(this, path, useDirectIO ? new LocalDirectRandomAccessFile(path, engine) : new LocalRandomAccessFile(path, engine), useDirectIO);

    public void CheckDirectIO(string path) => s_local.CheckDirectIO(path);

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

    public void SyncDirectory(string directory) => s_local.SyncDirectory(directory);

    public IDisposable LockFile(string path) => s_local.LockFile(path);

    private sealed class CountingFile(CountingFileSystem owner, string path, IRandomAccessFile inner, bool direct) : IAsyncRandomAccessFile
    {
        public async ValueTask<int> ReadAsync(long offset, Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            owner.AsyncReads.Enqueue((path, offset, buffer.Length, direct));
            var read = new HeldRead(path, offset, buffer, cancellationToken);
            if (owner.BeforeAsyncRead is { } hold)
            {
                await hold(read);
            }
            int n = await inner.ReadAsync(offset, buffer, cancellationToken);
            owner.AfterAsyncRead?.Invoke(read);
            return n;
        }

        public long Length => inner.Length;

        public int Alignment => inner.Alignment;

        public int Read(long offset, Span<byte> buffer)
        {
            owner.Reads.Enqueue((path, offset, buffer.Length, direct));
            return inner.Read(offset, buffer);
        }

        public void Dispose() => inner.Dispose();
    }
}
