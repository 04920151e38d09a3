using System.Runtime.InteropServices;

namespace KvEngine.Storage.IO;

/// <summary>struct io_uring_params (120 bytes), as the kernel's uapi header lays it out.</summary>
[StructLayout(LayoutKind.Sequential)]
internal struct IoUringParams
{
    public uint SqEntries;
    public uint CqEntries;
    public uint Flags;
    public uint SqThreadCpu;
    public uint SqThreadIdle;
    public uint Features;
    public uint WqFd;
    public uint Resv0;
    public uint Resv1;
    public uint Resv2;
    public IoSqRingOffsets SqOff;
    public IoCqRingOffsets CqOff;
}
