using System.Buffers;
using KvEngine.Memory;
using KvEngine.Storage;

namespace KvEngine.Table;

/// <summary>
/// Scratch memory for a block on its way from the file (raw bytes and trailer, or decompressed
/// contents that are copied elsewhere): an array from <see cref="ArrayPool{T}.Shared"/> up to
/// <see cref="ArrayLimit"/> bytes, native memory above it. A large block (a 64 MiB table's filter is
/// ~1.4 MiB, its index ~0.5 MiB) would otherwise be a fresh large-object-heap array on every table
/// open (the shared pool does not keep arrays over 1 MiB) or stay in the pool for good, and a dead
/// large-object array is freed only by a full collection. For a file read with direct I/O,
/// <see cref="RentAligned"/> gives aligned memory covering the aligned range around the block,
/// read whole (<see cref="ReadSpan"/>) and used from <see cref="Skip"/> on. One owner;
/// <see cref="Dispose"/> once.
/// </summary>
internal struct BlockScratch : IDisposable
{
    /// <summary>The largest scratch taken from the array pool.</summary>
    public const int ArrayLimit = 64 << 10;

    private byte[]? _array;
    private NativeBuffer _native;
    private AlignedBuffer _aligned;
    private int _skip;
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

    /// <summary>
    /// Scratch for the <paramref name="length"/> bytes at file offset <paramref name="offset"/>, to
    /// be read with direct I/O: <see cref="ReadSpan"/> is aligned memory for the aligned range
    /// starting at <paramref name="readOffset"/>, and <see cref="Span"/> the bytes asked for inside it.
    /// </summary>
    public static BlockScratch RentAligned(long offset, int length, out long readOffset)
    {
        readOffset = DirectIO.AlignDown(offset);
        var s = default(BlockScratch);
        s._skip = (int)(offset - readOffset);
        s._length = length;
        s._aligned = AlignedBuffer.Allocate(checked((int)(DirectIO.AlignUp(offset + length) - readOffset)));
        return s;
    }

    public readonly int Length => _length;

    /// <summary>Where <see cref="Span"/> starts inside <see cref="ReadSpan"/> (0 unless aligned).</summary>
    public readonly int Skip => _skip;

    /// <summary>The bytes to read from the file: <see cref="Span"/>, or for aligned scratch the whole aligned range around it.</summary>
    public readonly Span<byte> ReadSpan => _aligned.IsAllocated ? _aligned.Span : Span;

    /// <summary>The <see cref="Length"/> bytes.</summary>
    public readonly Span<byte> Span =>
        _array != null ? _array.AsSpan(0, _length) : _aligned.IsAllocated ? _aligned.Span.Slice(_skip, _length) : _native.Span[.._length];

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
        _aligned.Dispose();
    }
}
