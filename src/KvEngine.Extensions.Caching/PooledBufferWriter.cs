using System.Buffers;

namespace KvEngine.Extensions.Caching;

/// <summary>
/// An <see cref="IBufferWriter{T}"/> over arrays rented from <see cref="ArrayPool{T}.Shared"/>,
/// reused from call to call so that reading an entry allocates no array. Not thread-safe: one
/// user at a time (a thread-static instance, or one per asynchronous call).
/// </summary>
internal sealed class PooledBufferWriter : IBufferWriter<byte>
{
    /// <summary>A buffer grown past this is returned to the pool after use rather than kept.</summary>
    private const int RetainLimit = 1 << 20;

    private byte[] _buffer;
    private int _written;

    public PooledBufferWriter(int initialCapacity = 1024) => _buffer = ArrayPool<byte>.Shared.Rent(initialCapacity);

    public Span<byte> WrittenSpan => _buffer.AsSpan(0, _written);

    public Memory<byte> WrittenMemory => _buffer.AsMemory(0, _written);

    public void Advance(int count)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(count);
        if (count > _buffer.Length - _written)
        {
            throw new InvalidOperationException("Advanced past the end of the buffer.");
        }
        _written += count;
    }

    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _buffer.AsMemory(_written);
    }

    public Span<byte> GetSpan(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _buffer.AsSpan(_written);
    }

    /// <summary>Forgets the written bytes; a buffer grown large is swapped for a small one.</summary>
    public void Reset()
    {
        _written = 0;
        if (_buffer.Length > RetainLimit)
        {
            byte[] large = _buffer;
            _buffer = ArrayPool<byte>.Shared.Rent(1024);
            ArrayPool<byte>.Shared.Return(large);
        }
    }

    /// <summary>Returns the buffer to the pool; the writer must not be used afterwards.</summary>
    public void Release()
    {
        byte[] buffer = _buffer;
        _buffer = [];
        _written = 0;
        if (buffer.Length > 0)
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    private void Ensure(int sizeHint)
    {
        int need = Math.Max(sizeHint, 1);
        if (_buffer.Length - _written >= need)
        {
            return;
        }
        long wanted = Math.Max((long)_buffer.Length * 2, (long)_written + need);
        if (wanted > Array.MaxLength)
        {
            wanted = Array.MaxLength;
            if (wanted - _written < need)
            {
                throw new OutOfMemoryException("A cache entry does not fit in one array.");
            }
        }
        byte[] bigger = ArrayPool<byte>.Shared.Rent((int)wanted);
        _buffer.AsSpan(0, _written).CopyTo(bigger);
        ArrayPool<byte>.Shared.Return(_buffer);
        _buffer = bigger;
    }
}
