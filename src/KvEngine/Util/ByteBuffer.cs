using System.Buffers;
using System.Buffers.Binary;

namespace KvEngine.Util;

/// <summary>
/// A growable byte buffer over pooled arrays, used to build blocks, records and batches.
/// Owner: whoever constructed it; <see cref="Dispose"/> returns the array to the pool, after which
/// spans previously handed out must not be used. Arrays come from <see cref="BoundedArrayPool{T}"/>
/// (large ones are not pooled). Not thread-safe.
/// </summary>
internal sealed class ByteBuffer : IBufferWriter<byte>, IDisposable
{
    private byte[] _buffer;
    private int _length;

    public ByteBuffer(int initialCapacity = 256)
    {
        _buffer = BoundedArrayPool<byte>.Rent(Math.Max(16, initialCapacity));
    }

    public int Length => _length;

    public int Capacity => _buffer.Length;

    public ReadOnlySpan<byte> WrittenSpan => _buffer.AsSpan(0, _length);

    public ReadOnlyMemory<byte> WrittenMemory => _buffer.AsMemory(0, _length);

    /// <summary>The written bytes, mutable, for in-place patching (e.g. a batch header).</summary>
    public Span<byte> WrittenSpanMutable => _buffer.AsSpan(0, _length);

    public void Clear() => _length = 0;

    /// <summary>Shrinks the written length to <paramref name="length"/> (which must not exceed it).</summary>
    public void Truncate(int length)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(length);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(length, _length);
        _length = length;
    }

    public void Advance(int count)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(count);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(count, _buffer.Length - _length);
        _length += count;
    }

    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        EnsureFree(Math.Max(sizeHint, 1));
        return _buffer.AsMemory(_length);
    }

    public Span<byte> GetSpan(int sizeHint = 0)
    {
        EnsureFree(Math.Max(sizeHint, 1));
        return _buffer.AsSpan(_length);
    }

    public void Append(ReadOnlySpan<byte> data)
    {
        EnsureFree(data.Length);
        data.CopyTo(_buffer.AsSpan(_length));
        _length += data.Length;
    }

    public void AppendByte(byte value)
    {
        EnsureFree(1);
        _buffer[_length++] = value;
    }

    public void AppendFixed32(uint value)
    {
        EnsureFree(4);
        BinaryPrimitives.WriteUInt32LittleEndian(_buffer.AsSpan(_length), value);
        _length += 4;
    }

    public void AppendFixed64(ulong value)
    {
        EnsureFree(8);
        BinaryPrimitives.WriteUInt64LittleEndian(_buffer.AsSpan(_length), value);
        _length += 8;
    }

    public void AppendVarint32(uint value)
    {
        EnsureFree(Coding.MaxVarint32Length);
        _length += Coding.EncodeVarint32(_buffer.AsSpan(_length), value);
    }

    public void AppendVarint64(ulong value)
    {
        EnsureFree(Coding.MaxVarint64Length);
        _length += Coding.EncodeVarint64(_buffer.AsSpan(_length), value);
    }

    /// <summary>Appends varint32 length then the bytes (RocksDB's PutLengthPrefixedSlice).</summary>
    public void AppendLengthPrefixed(ReadOnlySpan<byte> data)
    {
        AppendVarint32((uint)data.Length);
        Append(data);
    }

    private void EnsureFree(int needed)
    {
        if (_buffer.Length - _length >= needed)
        {
            return;
        }
        long want = Math.Max((long)_buffer.Length * 2, (long)_length + needed);
        if (want > Array.MaxLength)
        {
            want = (long)_length + needed;
            if (want > Array.MaxLength)
            {
                throw new InvalidOperationException("ByteBuffer cannot grow beyond Array.MaxLength.");
            }
        }
        byte[] bigger = BoundedArrayPool<byte>.Rent((int)want);
        _buffer.AsSpan(0, _length).CopyTo(bigger);
        BoundedArrayPool<byte>.Return(_buffer);
        _buffer = bigger;
    }

    public void Dispose()
    {
        byte[] b = _buffer;
        _buffer = Array.Empty<byte>();
        _length = 0;
        BoundedArrayPool<byte>.Return(b);
    }
}
