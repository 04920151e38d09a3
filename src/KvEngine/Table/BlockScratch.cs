using System.Buffers;
using KvEngine.Memory;

namespace KvEngine.Table;

/// <summary>
/// Scratch memory for a block on its way from the file (raw bytes and trailer, or decompressed
/// contents that are copied elsewhere): an array from <see cref="ArrayPool{T}.Shared"/> up to
/// <see cref="ArrayLimit"/> bytes, native memory above it. A large block (a 64 MiB table's filter is
/// ~1.4 MiB, its index ~0.5 MiB) would otherwise be a fresh large-object-heap array on every table
/// open (the shared pool does not keep arrays over 1 MiB) or stay in the pool for good, and a dead
/// large-object array is freed only by a full collection. One owner; <see cref="Dispose"/> once.
/// </summary>
internal struct BlockScratch : IDisposable
{
    /// <summary>The largest scratch taken from the array pool.</summary>
    public const int ArrayLimit = 64 << 10;

    private byte[]? _array;
    private NativeBuffer _native;
    private int _length;

    /// <summary><paramref name="length"/> bytes of scratch (contents undefined).</summary>
    public static BlockScratch Rent(int length)
    {
        var s = default(BlockScratch);
        s._length = length;
        if (length <= ArrayLimit)
        {
            s._array = ArrayPool<byte>.Shared.Rent(Math.Max(length, 1));
        }
        else
        {
            s._native = NativeAllocator.Shared.Allocate(length, use: NativeUse.TableBlock);
        }
        return s;
    }

    public readonly int Length => _length;

    /// <summary>The <see cref="Length"/> bytes.</summary>
    public readonly Span<byte> Span => _array != null ? _array.AsSpan(0, _length) : _native.Span[.._length];

    /// <summary>Keeps only the first <paramref name="length"/> bytes (no copy).</summary>
    public void Shrink(int length)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThan(length, _length);
        ArgumentOutOfRangeException.ThrowIfNegative(length);
        _length = length;
    }

    public void Dispose()
    {
        if (_array != null)
        {
            ArrayPool<byte>.Shared.Return(_array);
            _array = null;
        }
        _native.Dispose();
        _native = default;
    }
}
