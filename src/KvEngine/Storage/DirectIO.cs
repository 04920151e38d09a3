using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;

namespace KvEngine.Storage;

/// <summary>
/// Direct I/O (O_DIRECT) on Linux: the page cache is bypassed, so every read and write must start
/// at an offset, cover a length and use a buffer that are all multiples of <see cref="Alignment"/>.
/// 4096 bytes covers every logical block size Linux devices use (512 and 4096), as RocksDB's
/// default does when it cannot query the device. Files are opened through libc's open(2) (.NET's
/// <see cref="FileOptions"/> has no O_DIRECT) and wrapped in a <see cref="SafeFileHandle"/>, so
/// reads and writes go through <see cref="RandomAccess"/> and fail as every other file does
/// (<see cref="IOException"/>, errno as the HResult). Other systems: <see cref="NotSupportedException"/>.
/// Stateless and thread-safe.
/// </summary>
internal static class DirectIO
{
    /// <summary>Alignment of offsets, lengths and buffers in direct I/O.</summary>
    public const int Alignment = 4096;

    public static bool IsSupportedPlatform => OperatingSystem.IsLinux();

    public static long AlignDown(long value) => value & ~(long)(Alignment - 1);

    public static long AlignUp(long value) => (value + Alignment - 1) & ~(long)(Alignment - 1);

    public static bool IsAligned(long value) => (value & (Alignment - 1)) == 0;

    /// <summary>
    /// Opens <paramref name="path"/> with O_DIRECT: for reading (<paramref name="write"/> false; the
    /// file must exist) or created/truncated for writing. A file system that refuses O_DIRECT
    /// (EINVAL at open: ramfs, tmpfs on older kernels, some FUSE and network file systems) gives a
    /// <see cref="NotSupportedException"/> naming the path, never a later wrong read.
    /// </summary>
    public static SafeFileHandle Open(string path, bool write)
    {
        if (!IsSupportedPlatform)
        {
            throw new NotSupportedException($"Direct I/O is supported on Linux only; cannot open '{path}' with it on {RuntimeInformation.OSDescription}.");
        }
        int flags = (write ? PosixNative.OWrOnly | PosixNative.OCreat | PosixNative.OTrunc : PosixNative.ORdOnly) | PosixNative.OCloExec | PosixNative.ODirect;
        int fd = write ? PosixNative.Open(path, flags, 420 /* 0644 */) : PosixNative.Open(path, flags);
        if (fd < 0)
        {
            int errno = Marshal.GetLastPInvokeError();
            throw errno switch
            {
                PosixNative.EInval => new NotSupportedException(
                    $"The file system holding '{path}' refuses direct I/O (O_DIRECT: EINVAL); use buffered I/O for this path."),
                PosixNative.ENoEnt => new FileNotFoundException($"Cannot open '{path}' for direct I/O: no such file (errno {errno}).", path),
                _ => new IOException($"Cannot open '{path}' for direct I/O (errno {errno}).", errno),
            };
        }
        return new SafeFileHandle(fd, ownsHandle: true);
    }

    /// <summary>
    /// Checks that the existing file <paramref name="path"/> can be opened with O_DIRECT (the test a
    /// database runs at open when direct I/O is asked for); throws as <see cref="Open"/> does.
    /// </summary>
    public static void Probe(string path) => Open(path, write: false).Dispose();

    /// <summary>Reads until <paramref name="buffer"/> is full or the file ends; returns the count read.</summary>
    public static int ReadFully(SafeFileHandle handle, long offset, Span<byte> buffer)
    {
        int total = 0;
        while (total < buffer.Length)
        {
            int n = RandomAccess.Read(handle, buffer[total..], offset + total);
            if (n == 0)
            {
                break;
            }
            total += n;
            if (!IsAligned(n))
            {
                break; // a direct read ends short only at the end of the file
            }
        }
        return total;
    }
}
