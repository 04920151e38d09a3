using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;

namespace KvEngine.Storage;

/// <summary>
/// An append-only file written through a shared memory mapping (Linux only; see
/// <see cref="LocalFileSystem.CreateLogFile"/>): an append is a copy into the page cache, with no
/// system call, and is as safe from a process kill as a write(2) is, since the kernel owns the pages.
/// What it costs instead: the file grows by whole windows.
/// <code>
/// file := appended bytes [0, Size) | reserved zeros [Size, mapped end)   // while open, or after a crash
/// file := appended bytes [0, Size)                                        // after Dispose
/// </code>
/// The window [_windowStart, _windowStart + WindowSize) is mapped with MAP_SHARED; before it is
/// mapped its blocks are reserved with posix_fallocate, so a store into it can never meet a full
/// disk (which would kill the process with SIGBUS): a full disk surfaces here, at the reservation,
/// as an <see cref="IOException"/> whose HResult is ENOSPC, like a failed write. <see cref="Sync"/>
/// is fdatasync, which writes back pages dirtied through any mapping of the file and the size the
/// reservation changed. <see cref="Dispose"/> unmaps and cuts the file to <see cref="Size"/>; after a
/// crash the reserved tail stays, all zeros, which RocksDB's log reader (and ours) take for
/// preallocated space. A kill in the middle of a copy can leave one record partly written before
/// those zeros: the log reader treats that, like a truncated record, as the torn tail of the log.
/// <para>
/// Invariants: _windowStart is a multiple of WindowSize; _windowStart &lt;= _size &lt;= _windowStart +
/// WindowSize while a window is mapped (_window != 0). Not thread-safe: owned by the one writer that
/// created it (as every <see cref="IWritableFile"/>); readers of the file go through their own
/// descriptors, which see the mapped stores at once (one page cache).
/// </para>
/// </summary>
internal sealed class LocalMappedWritableFile : IWritableFile
{
    /// <summary>Bytes mapped and reserved at a time: a multiple of every page size in use.</summary>
    public const int WindowSize = 1 << 20;

    private readonly SafeFileHandle _handle;
    private readonly string _path;
    private nint _window;
    private long _windowStart;
    private long _size;

    private LocalMappedWritableFile(SafeFileHandle handle, string path)
    {
        _handle = handle;
        _path = path;
    }

    /// <summary>
    /// Creates (or truncates) <paramref name="path"/> and maps its first window; null, with nothing
    /// left open, when this file system cannot map files (the caller then writes it plainly).
    /// </summary>
    public static LocalMappedWritableFile? TryCreate(string path)
    {
        SafeFileHandle handle = File.OpenHandle(path, FileMode.Create, FileAccess.ReadWrite, FileShare.Read);
        var file = new LocalMappedWritableFile(handle, path);
        try
        {
            if (!file.TryMapWindow(0, out _))
            {
                // ENODEV / EINVAL / EOPNOTSUPP / EACCES: no mmap here (some FUSE and network file systems).
                handle.Dispose();
                return null;
            }
            return file;
        }
        catch
        {
            file.Dispose();
            throw;
        }
    }

    public long Size => _size;

    public unsafe void Append(ReadOnlySpan<byte> data)
    {
        ObjectDisposedException.ThrowIf(_handle.IsClosed, this);
        while (!data.IsEmpty)
        {
            long windowEnd = _windowStart + WindowSize;
            if (_window == 0 || _size == windowEnd)
            {
                MapNextWindow();
                windowEnd = _windowStart + WindowSize;
            }
            int n = (int)Math.Min(data.Length, windowEnd - _size);
            data[..n].CopyTo(new Span<byte>((byte*)_window + (_size - _windowStart), n));
            _size += n;
            data = data[n..];
        }
    }

    /// <summary>Nothing to do: every appended byte is already in the page cache.</summary>
    public void Flush() => ObjectDisposedException.ThrowIf(_handle.IsClosed, this);

    public void Sync()
    {
        ObjectDisposedException.ThrowIf(_handle.IsClosed, this);
        LocalWritableFile.SyncData(_handle);
    }

    public void Dispose()
    {
        if (_handle.IsClosed)
        {
            return;
        }
        try
        {
            Unmap();
            RandomAccess.SetLength(_handle, _size);
        }
        finally
        {
            _handle.Dispose();
        }
    }

    // The window that starts at _size (a window boundary, or 0): reserve its blocks, then map it.
    // After a failure nothing is mapped and the next append tries the same window again.
    private void MapNextWindow()
    {
        long start = _size & ~(long)(WindowSize - 1);
        Unmap();
        if (!TryMapWindow(start, out int errno))
        {
            throw new IOException($"Could not map {_path} at offset {start} (errno {errno}).", errno);
        }
    }

    private bool TryMapWindow(long start, out int errno)
    {
        bool added = false;
        try
        {
            _handle.DangerousAddRef(ref added);
            int fd = (int)_handle.DangerousGetHandle();
            errno = PosixNative.PosixFallocate(fd, start, WindowSize);
            if (errno != 0)
            {
                // A full disk (ENOSPC) is an I/O error of this write, as write(2) would report it.
                if (errno is StorageErrors.ENoSpc or StorageErrors.EDQuot)
                {
                    throw new IOException($"No space left on device reserving {WindowSize} bytes of {_path} at offset {start}.", errno);
                }
                throw new IOException($"posix_fallocate failed on {_path} at offset {start} (errno {errno}).", errno);
            }
            nint address = PosixNative.Mmap(0, WindowSize, PosixNative.ProtRead | PosixNative.ProtWrite, PosixNative.MapShared, fd, start);
            if (address == PosixNative.MapFailed)
            {
                errno = Marshal.GetLastPInvokeError();
                return false;
            }
            _window = address;
            _windowStart = start;
            return true;
        }
        finally
        {
            if (added)
            {
                _handle.DangerousRelease();
            }
        }
    }

    private void Unmap()
    {
        if (_window == 0)
        {
            return;
        }
        nint window = _window;
        _window = 0;
        if (PosixNative.Munmap(window, WindowSize) != 0)
        {
            int errno = Marshal.GetLastPInvokeError();
            throw new IOException($"munmap failed on {_path} (errno {errno}).", errno);
        }
    }
}
