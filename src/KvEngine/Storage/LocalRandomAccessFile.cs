using System.Runtime.CompilerServices;
using KvEngine.Storage.IO;
using Microsoft.Win32.SafeHandles;

namespace KvEngine.Storage;

/// <summary>
/// pread-style reads on a <see cref="SafeFileHandle"/>; no buffering. Asynchronous reads go through
/// the block-read engine given, else the process's shared one (<see cref="BlockReadEngines.Shared"/>);
/// a read in flight holds a reference on the handle, so Dispose during it closes the file after it.
/// Thread-safe.
/// </summary>
internal sealed class LocalRandomAccessFile : IAsyncRandomAccessFile
{
    private readonly SafeFileHandle _handle;
    private readonly IBlockReadEngine? _engine;

    /// <summary>
    /// Opens <paramref name="path"/> for positional reads. With <paramref name="adviseRandom"/>, on
    /// Linux the kernel is told the file is read at random offsets (POSIX_FADV_RANDOM, RocksDB's
    /// advise_random_on_open), so a small read brings in only its own pages: no readahead that
    /// would fill a small page cache with neighbours no Get asks for. The engine's own readahead
    /// (iterators, compaction inputs) reads what it needs explicitly and is unaffected. The advice
    /// is advice: a file system that refuses it is read as it is.
    /// </summary>
    public LocalRandomAccessFile(string path, IBlockReadEngine? engine = null, bool adviseRandom = false)
    {
        _handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
        Length = RandomAccess.GetLength(_handle);
        _engine = engine;
        if (adviseRandom && OperatingSystem.IsLinux())
        {
            _ = PosixNative.PosixFadvise((int)_handle.DangerousGetHandle(), 0, 0, PosixNative.FadvRandom);
        }
    }

    public long Length { get; }

    /// <summary>The open handle, for reads through a block-read engine (valid until <see cref="Dispose"/>; a read in flight holds a reference on it).</summary>
    internal SafeFileHandle Handle => _handle;

    public int Read(long offset, Span<byte> buffer)
    {
        int total = 0;
        while (total < buffer.Length)
        {
            int n = RandomAccess.Read(_handle, buffer[total..], offset + total);
            if (n == 0)
            {
                break;
            }
            total += n;
        }
        return total;
    }

    public ValueTask<int> ReadAsync(long offset, Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        IBlockReadEngine engine = _engine ?? BlockReadEngines.Shared;
        return ReadFullyAsync(engine, engine.ReadAsync(_handle, buffer, offset, cancellationToken), offset, buffer, cancellationToken);
    }

    /// <summary>Completes <paramref name="first"/>, then reads on after a short read until the buffer is full or the file ends (pooled state machine: no allocation once warm).</summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<int> ReadFullyAsync(IBlockReadEngine engine, ValueTask<int> first, long offset, Memory<byte> buffer, CancellationToken cancellationToken)
    {
        int total = await first.ConfigureAwait(false);
        while (total > 0 && total < buffer.Length)
        {
            int n = await engine.ReadAsync(_handle, buffer[total..], offset + total, cancellationToken).ConfigureAwait(false);
            if (n == 0)
            {
                break;
            }
            total += n;
        }
        return total;
    }

    public void Dispose() => _handle.Dispose();
}
