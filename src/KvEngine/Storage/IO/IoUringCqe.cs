using System.Runtime.InteropServices;

namespace KvEngine.Storage.IO;

/// <summary>struct io_uring_cqe (16 bytes; the ring is not set up with CQE32).</summary>
[StructLayout(LayoutKind.Sequential)]
internal struct IoUringCqe
{
    public ulong UserData;
    public int Result;
    public uint Flags;
}
