using System.Runtime.InteropServices;

namespace KvEngine.Storage.IO;

/// <summary>
/// The system calls behind <see cref="IoUring"/> and the thread-pool engine, from the C library every
/// .NET process on Linux has loaded (no liburing, no native package). io_uring_setup and
/// io_uring_enter have the same numbers (425, 426) on every Linux architecture (asm-generic).
/// Stateless and thread-safe.
/// </summary>
internal static partial class IoUringNative
{
    public const long SysIoUringSetup = 425;
    public const long SysIoUringEnter = 426;

    public const uint EnterGetEvents = 1u << 0; // IORING_ENTER_GETEVENTS
    public const uint FeatSingleMmap = 1u << 0; // IORING_FEAT_SINGLE_MMAP
    public const uint FeatNoDrop = 1u << 1;     // IORING_FEAT_NODROP
    public const uint SqCqOverflow = 1u << 1;   // IORING_SQ_CQ_OVERFLOW (sq ring flags)

    public const long OffSqRing = 0;
    public const long OffCqRing = 0x8000000;
    public const long OffSqes = 0x10000000;

    public const byte OpNop = 0;          // IORING_OP_NOP
    public const byte OpAsyncCancel = 14; // IORING_OP_ASYNC_CANCEL
    public const byte OpRead = 22;        // IORING_OP_READ

    public const int MapPopulate = 0x8000;

    public const int EIntr = 4;
    public const int EAgain = 11;
    public const int EBusy = 16;

    /// <summary>syscall(2) with six integer arguments; returns -1 and sets errno on failure.</summary>
    [LibraryImport("libc", EntryPoint = "syscall", SetLastError = true)]
    private static partial long Syscall(long number, long a1, long a2, long a3, long a4, long a5, long a6);

    /// <summary>io_uring_setup(2): the ring's fd, or -errno.</summary>
    public static unsafe int Setup(uint entries, IoUringParams* parameters)
    {
        long r = Syscall(SysIoUringSetup, entries, (long)parameters, 0, 0, 0, 0);
        return r < 0 ? -Marshal.GetLastPInvokeError() : (int)r;
    }

    /// <summary>io_uring_enter(2) without a signal mask: the number of SQEs consumed, or -errno.</summary>
    public static int Enter(int ringFd, uint toSubmit, uint minComplete, uint flags)
    {
        long r = Syscall(SysIoUringEnter, ringFd, toSubmit, minComplete, flags, 0, 0);
        return r < 0 ? -Marshal.GetLastPInvokeError() : (int)r;
    }

    /// <summary>pread(2): bytes read, or -1 with errno set.</summary>
    [LibraryImport("libc", EntryPoint = "pread", SetLastError = true)]
    public static unsafe partial nint Pread(int fd, byte* buffer, nuint count, long offset);
}
