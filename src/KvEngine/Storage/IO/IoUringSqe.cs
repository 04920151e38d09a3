using System.Runtime.InteropServices;

namespace KvEngine.Storage.IO;

/// <summary>
/// struct io_uring_sqe (64 bytes), the fields a read, a NOP and an ASYNC_CANCEL use; the unions'
/// other members share these offsets.
/// </summary>
[StructLayout(LayoutKind.Explicit, Size = 64)]
internal struct IoUringSqe
{
    [FieldOffset(0)] public byte Opcode;
    [FieldOffset(1)] public byte Flags;
    [FieldOffset(2)] public ushort IoPrio;
    [FieldOffset(4)] public int Fd;
    [FieldOffset(8)] public ulong Offset;
    [FieldOffset(16)] public ulong Address;
    [FieldOffset(24)] public uint Length;
    [FieldOffset(28)] public uint OpFlags; // rw_flags, cancel_flags, ...
    [FieldOffset(32)] public ulong UserData;
    [FieldOffset(40)] public ushort BufIndex;
    [FieldOffset(42)] public ushort Personality;
    [FieldOffset(44)] public int SpliceFdIn;
    [FieldOffset(48)] public ulong Address3;
    [FieldOffset(56)] public ulong Pad2;
}
