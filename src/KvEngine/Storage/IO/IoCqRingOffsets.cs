using System.Runtime.InteropServices;

namespace KvEngine.Storage.IO;

/// <summary>struct io_cqring_offsets (40 bytes): where the CQ ring's fields sit in its mapping.</summary>
[StructLayout(LayoutKind.Sequential)]
internal struct IoCqRingOffsets
{
    public uint Head;
    public uint Tail;
    public uint RingMask;
    public uint RingEntries;
    public uint Overflow;
    public uint Cqes;
    public uint Flags;
    public uint Resv1;
    public ulong UserAddr;
}
