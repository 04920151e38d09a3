using System.Runtime.InteropServices;

namespace KvEngine.Storage.IO;

/// <summary>struct io_sqring_offsets (40 bytes): where the SQ ring's fields sit in its mapping.</summary>
[StructLayout(LayoutKind.Sequential)]
internal struct IoSqRingOffsets
{
    public uint Head;
    public uint Tail;
    public uint RingMask;
    public uint RingEntries;
    public uint Flags;
    public uint Dropped;
    public uint Array;
    public uint Resv1;
    public ulong UserAddr;
}
