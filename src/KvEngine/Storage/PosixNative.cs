using System.Runtime.InteropServices;

namespace KvEngine.Storage;

/// <summary>
/// The few POSIX calls .NET does not expose, from the C library every .NET process on Linux has
/// already loaded (no extra native dependency): opening a directory to fsync it, fdatasync, and hard links.
/// Stateless and thread-safe.
/// </summary>
internal static class PosixNative
{
    public const int ORdOnly = 0;
    public const int ODirectory = 0x10000; // Linux x86-64/arm64 O_DIRECTORY

    [DllImport("libc", EntryPoint = "open", SetLastError = true)]
    public static extern int Open([MarshalAs(UnmanagedType.LPUTF8Str)] string path, int flags);

    [DllImport("libc", EntryPoint = "fsync", SetLastError = true)]
    public static extern int Fsync(int fd);

    /// <summary>fdatasync(2): data and the metadata needed to read it back (the size), not timestamps.</summary>
    [DllImport("libc", EntryPoint = "fdatasync", SetLastError = true)]
    public static extern int Fdatasync(int fd);

    /// <summary>link(2): a second directory entry for an existing file.</summary>
    [DllImport("libc", EntryPoint = "link", SetLastError = true)]
    public static extern int Link([MarshalAs(UnmanagedType.LPUTF8Str)] string oldPath, [MarshalAs(UnmanagedType.LPUTF8Str)] string newPath);

    [DllImport("libc", EntryPoint = "close", SetLastError = true)]
    public static extern int Close(int fd);
}
