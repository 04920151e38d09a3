using System.Buffers;

namespace KvEngine.Util;

/// <summary>
/// The writer behind Get's byte[] (one per thread): a value written whole into an empty writer
/// (GetSpan(n) then Advance(n), as <see cref="BufferWriterCopy"/> writes) that is larger than the
/// reused buffer lands in a new array of exactly its size, which <see cref="ToArrayAndReset"/>
/// hands back without copying; smaller values are copied out of the reused buffer. So a large
/// value costs one array (the result) instead of a buffer grown to its size, kept by the thread,
/// and a copy. The reused buffer never grows past <see cref="RetainedBytes"/>. One thread; no
/// other member of <see cref="IBufferWriter{T}"/> semantics is relaxed.
/// </summary>
internal sealed class ValueArrayWriter : IBufferWriter<byte>
{
    /// <summary>Largest buffer kept between calls.</summary>
    public const int RetainedBytes = 64 << 10;

    private byte[] _retained = new byte[256];
    private byte[] _array;
    private int _written;

    public ValueArrayWriter() => _array = _retained;

    public int WrittenCount => _written;

    public void Advance(int count)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(count);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(count, _array.Length - _written);
        _written += count;
    }

    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        Reserve(sizeHint);
        return _array.AsMemory(_written);
    }

    public Span<byte> GetSpan(int sizeHint = 0)
    {
        Reserve(sizeHint);
        return _array.AsSpan(_written);
    }

    /// <summary>The bytes written, as a new array (or the exact array they were written into); empties the writer.</summary>
    public byte[] ToArrayAndReset()
    {
        byte[] result = !ReferenceEquals(_array, _retained) && _array.Length == _written
            ? _array
            : _array.AsSpan(0, _written).ToArray();
        if (!ReferenceEquals(_array, _retained) && !ReferenceEquals(_array, result) && _array.Length <= RetainedBytes)
        {
            _retained = _array;
        }
        _array = _retained;
        _written = 0;
        return result;
    }

    /// <summary>Empties the writer, dropping any array larger than the reused one.</summary>
    public void Reset()
    {
        _array = _retained;
        _written = 0;
    }

    private void Reserve(int sizeHint)
    {
        int need = Math.Max(sizeHint, 1);
        if (_array.Length - _written >= need)
        {
            return;
        }
        if (_written == 0 && need > RetainedBytes)
        {
            _array = GC.AllocateUninitializedArray<byte>(need); // a large value written whole: its result array
            return;
        }
        long size = Math.Max((long)_array.Length * 2, (long)_written + need);
        byte[] bigger = GC.AllocateUninitializedArray<byte>((int)Math.Min(size, Array.MaxLength));
        _array.AsSpan(0, _written).CopyTo(bigger);
        _array = bigger;
    }
}
