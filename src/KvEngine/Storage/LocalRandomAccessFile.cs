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

    public LocalRandomAccessFile(string path, IBlockReadEngine? engine = null)
    {
        _handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
        Length = RandomAccess.GetLength(_handle);
        _engine = engine;
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
