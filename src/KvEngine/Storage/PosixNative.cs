using System.Runtime.InteropServices;

namespace KvEngine.Storage;

/// <summary>
/// The few POSIX calls .NET does not expose, from the C library every .NET process on Linux has
/// already loaded (no extra native dependency): opening a directory to fsync it, fdatasync, hard links,
/// opening with O_DIRECT (<see cref="DirectIO"/>), and the memory mapping and block reservation of <see cref="LocalMappedWritableFile"/>.
/// Stateless and thread-safe.
/// </summary>
internal static partial class PosixNative
{
    public const int ORdOnly = 0;
    public const int ODirectory = 0x10000; // Linux x86-64/arm64 O_DIRECTORY

    public const int OWrOnly = 0x1;
    public const int OCreat = 0x40;
    public const int OTrunc = 0x200;
    public const int OCloExec = 0x80000;
    public const int EInval = 22;
    public const int ENoEnt = 2;

    /// <summary>O_DIRECT: 0x4000 on x86-64, 0x10000 on arm64 (Linux's asm-generic and arm64 headers).</summary>
    public static int ODirect => RuntimeInformation.ProcessArchitecture is Architecture.Arm64 or Architecture.Arm ? 0x10000 : 0x4000;

    [LibraryImport("libc", EntryPoint = "open", SetLastError = true)]
    public static partial int Open([MarshalAs(UnmanagedType.LPUTF8Str)] string path, int flags);

    /// <summary>open(2) with a creation mode (the variadic third argument, an int on Linux's ABIs).</summary>
    [LibraryImport("libc", EntryPoint = "open", SetLastError = true)]
    public static partial int Open([MarshalAs(UnmanagedType.LPUTF8Str)] string path, int flags, int mode);

    /// <summary>ftruncate(2): sets the length of an open file.</summary>
    [LibraryImport("libc", EntryPoint = "ftruncate", SetLastError = true)]
    public static partial int Ftruncate(int fd, long length);

    [LibraryImport("libc", EntryPoint = "fsync", SetLastError = true)]
    public static partial int Fsync(int fd);

    /// <summary>fdatasync(2): data and the metadata needed to read it back (the size), not timestamps.</summary>
    [LibraryImport("libc", EntryPoint = "fdatasync", SetLastError = true)]
    public static partial int Fdatasync(int fd);

    /// <summary>link(2): a second directory entry for an existing file.</summary>
    [LibraryImport("libc", EntryPoint = "link", SetLastError = true)]
    public static partial int Link([MarshalAs(UnmanagedType.LPUTF8Str)] string oldPath, [MarshalAs(UnmanagedType.LPUTF8Str)] string newPath);

    [LibraryImport("libc", EntryPoint = "close", SetLastError = true)]
    public static partial int Close(int fd);

    public const int ProtRead = 0x1;
    public const int ProtWrite = 0x2;
    public const int MapShared = 0x01;
    public static readonly nint MapFailed = -1;

    /// <summary>mmap(2); returns <see cref="MapFailed"/> on failure (errno in the last P/Invoke error).</summary>
    [LibraryImport("libc", EntryPoint = "mmap", SetLastError = true)]
    public static partial nint Mmap(nint address, nuint length, int protection, int flags, int fd, long offset);

    [LibraryImport("libc", EntryPoint = "munmap", SetLastError = true)]
    public static partial int Munmap(nint address, nuint length);

    /// <summary>posix_fallocate(3): reserves the blocks of a range, extending the file; returns 0 or an errno value (it does not set errno).</summary>
    [LibraryImport("libc", EntryPoint = "posix_fallocate")]
    public static partial int PosixFallocate(int fd, long offset, long length);

    /// <summary>POSIX_FADV_RANDOM: the file is read at random offsets (the kernel stops reading ahead on it).</summary>
    public const int FadvRandom = 1;

    /// <summary>posix_fadvise(2): advice about how a file will be read; returns 0 or an errno value (it does not set errno).</summary>
    [LibraryImport("libc", EntryPoint = "posix_fadvise")]
    public static partial int PosixFadvise(int fd, long offset, long length, int advice);

    public const int FSetLk = 6;       // F_SETLK: a process-associated (POSIX) record lock
    public const int FOfdSetLk = 37;   // F_OFD_SETLK: a lock owned by the open file description
    public const short FRdLck = 0;
    public const short FWrLck = 1;
    public const short FUnLck = 2;

    /// <summary>struct flock of Linux x86-64 and arm64 (32 bytes: l_type, l_whence, l_start, l_len, l_pid).</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct FLock
    {
        public short Type;
        public short Whence;
        public long Start;
        public long Length;
        public int Pid;
    }

    /// <summary>fcntl(2) with a lock command (F_SETLK, F_OFD_SETLK); 0, or -1 with errno.</summary>
    [LibraryImport("libc", EntryPoint = "fcntl", SetLastError = true)]
    public static partial int FcntlLock(int fd, int command, ref FLock lockSpec);

    /// <summary>
    /// Takes a whole-file write lock on <paramref name="fd"/> with <paramref name="command"/>
    /// without waiting; false when another owner holds a conflicting lock (EAGAIN or EACCES), and
    /// an <see cref="IOException"/> for any other failure.
    /// </summary>
    public static bool TryLockWholeFile(int fd, int command, string path)
    {
        var spec = new FLock { Type = FWrLck, Whence = 0, Start = 0, Length = 0 };
        if (FcntlLock(fd, command, ref spec) == 0)
        {
            return true;
        }
        int errno = Marshal.GetLastPInvokeError();
        if (errno is EAgain or EAcces)
        {
            return false;
        }
        throw new IOException($"fcntl lock of '{path}' failed (errno {errno}).");
    }

    private const int EAgain = 11;
    private const int EAcces = 13;
}
