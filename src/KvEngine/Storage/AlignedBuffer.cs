using System.Runtime.InteropServices;

namespace KvEngine.Storage;

/// <summary>
/// Native memory aligned to <see cref="DirectIO.Alignment"/>, as O_DIRECT requires of the buffer
/// a read or write uses (glibc's aligned malloc: a block read costs no mapping, unlike the
/// allocator's page-sized classes). The variable that received it from <see cref="Allocate"/> is
/// its one owner; <see cref="Dispose"/> once. The default value holds nothing. Not thread-safe.
/// </summary>
internal unsafe struct AlignedBuffer : IDisposable
{
    private byte* _pointer;
    private int _capacity;

    /// <summary>At least <paramref name="length"/> bytes (rounded up to the alignment), contents undefined.</summary>
    public static AlignedBuffer Allocate(int length)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(length);
        int capacity = (int)DirectIO.AlignUp(Math.Max(length, 1));
        var b = default(AlignedBuffer);
        b._pointer = (byte*)NativeMemory.AlignedAlloc((nuint)capacity, DirectIO.Alignment);
        b._capacity = capacity;
        return b;
    }

    public readonly bool IsAllocated => _pointer != null;

    /// <summary>Usable bytes (a multiple of the alignment).</summary>
    public readonly int Capacity => _capacity;

    public readonly byte* Pointer => _pointer;

    /// <summary>The whole buffer.</summary>
    public readonly Span<byte> Span => new(_pointer, _capacity);

    public void Dispose()
    {
        if (_pointer != null)
        {
            NativeMemory.AlignedFree(_pointer);
            _pointer = null;
            _capacity = 0;
        }
    }
}
