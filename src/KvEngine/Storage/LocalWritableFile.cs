using System.Buffers;
using Microsoft.Win32.SafeHandles;

namespace KvEngine.Storage;

/// <summary>
/// Append-only file with a 64 KiB in-process buffer, rented from <see cref="ArrayPool{T}.Shared"/> for
/// the file's life (every table a flush or compaction writes opens one: a fresh array each was
/// garbage the GC heap grew by). Owner: the single writer that created it.
/// Invariant: bytes [0, _flushed) are in the OS; _buffer[0.._buffered) follow them; once the
/// handle is closed the buffer is back in the pool and nothing touches it.
/// </summary>
internal sealed class LocalWritableFile : IWritableFile
{
    private const int BufferSize = 64 * 1024;
    private readonly SafeFileHandle _handle;
    private byte[] _buffer = ArrayPool<byte>.Shared.Rent(BufferSize);
    private int _buffered;
    private long _flushed;

    public LocalWritableFile(string path)
    {
        _handle = File.OpenHandle(path, FileMode.Create, FileAccess.Write, FileShare.Read);
    }

    public long Size => _flushed + _buffered;

    public void Append(ReadOnlySpan<byte> data)
    {
        ObjectDisposedException.ThrowIf(_handle.IsClosed, this);
        if (data.Length <= BufferSize - _buffered)
        {
            data.CopyTo(_buffer.AsSpan(_buffered));
            _buffered += data.Length;
            return;
        }
        Flush();
        if (data.Length >= BufferSize)
        {
            RandomAccess.Write(_handle, data, _flushed);
            _flushed += data.Length;
            return;
        }
        data.CopyTo(_buffer);
        _buffered = data.Length;
    }

    public void Flush()
    {
        ObjectDisposedException.ThrowIf(_handle.IsClosed, this);
        if (_buffered == 0)
        {
            return;
        }
        RandomAccess.Write(_handle, _buffer.AsSpan(0, _buffered), _flushed);
        _flushed += _buffered;
        _buffered = 0;
    }

    /// <summary>
    /// Flushes, then makes the bytes durable: fdatasync on Linux (what RocksDB's Sync does with
    /// use_fsync=false: data plus the size needed to read it, without the timestamp writes of a
    /// full fsync), a full flush to disk elsewhere.
    /// </summary>
    public void Sync()
    {
        Flush();
        SyncData(_handle);
    }

    /// <summary>fdatasync on Linux, a full flush to disk elsewhere; <see cref="IOException"/> (HResult = errno) on failure.</summary>
    internal static void SyncData(SafeFileHandle handle)
    {
        if (!OperatingSystem.IsLinux())
        {
            RandomAccess.FlushToDisk(handle);
            return;
        }
        bool added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            if (PosixNative.Fdatasync((int)handle.DangerousGetHandle()) != 0)
            {
                int errno = System.Runtime.InteropServices.Marshal.GetLastPInvokeError();
                throw new IOException($"fdatasync failed (errno {errno}).", errno);
            }
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
    }

    public void Dispose()
    {
        if (_handle.IsClosed)
        {
            return;
        }
        try
        {
            Flush();
        }
        finally
        {
            _handle.Dispose();
            byte[] buffer = _buffer;
            _buffer = [];
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }
}
