using System.Buffers;
using System.Buffers.Binary;
using KvEngine.Memory;

namespace KvEngine.Util;

/// <summary>
/// A growable byte buffer over pooled arrays, used to build blocks, records and batches.
/// Owner: whoever constructed it; <see cref="Dispose"/> returns the array to the pool, after which
/// spans previously handed out must not be used. Arrays come from <see cref="BoundedArrayPool{T}"/>
/// (large ones are not pooled). Created with <c>spillToNative</c>, a buffer that grows past
/// <see cref="BoundedArrayPool{T}.PooledLimitBytes"/> moves to native memory from
/// <see cref="NativeAllocator.Shared"/> instead (page mappings for the large sizes) and gives it
/// back on <see cref="Dispose"/> or <see cref="ReleaseLarge"/>: for the buffers of table building
/// (index blocks, whole filters) that reach megabytes once per table, whose doubling arrays would
/// otherwise wait on the large-object heap for a full collection. Such an owner must dispose it.
/// Not thread-safe.
/// </summary>
internal sealed unsafe class ByteBuffer : IBufferWriter<byte>, IDisposable
{
    private byte[] _buffer; // the storage unless _native is allocated
    private NativeBuffer _native; // spilled storage; its one owner
    private byte* _nativeData;
    private int _capacity;
    private int _length;
    private readonly bool _spillToNative;

    public ByteBuffer(int initialCapacity = 256)
        : this(initialCapacity, spillToNative: false)
    {
    }

    /// <param name="initialCapacity">Bytes to start with.</param>
    /// <param name="spillToNative">Grow past the pooled limit in native memory (see the type's comment); the owner must dispose the buffer.</param>
    public ByteBuffer(int initialCapacity, bool spillToNative)
    {
        _spillToNative = spillToNative;
        _buffer = BoundedArrayPool<byte>.Rent(Math.Max(16, spillToNative ? Math.Min(initialCapacity, BoundedArrayPool<byte>.PooledLimitBytes) : initialCapacity));
        _capacity = _buffer.Length;
    }

    public int Length => _length;

    public int Capacity => _capacity;

    /// <summary>True while the storage is native memory (a spilled buffer).</summary>
    public bool IsNative => _nativeData != null;

    private Span<byte> Storage => _nativeData != null ? new Span<byte>(_nativeData, _capacity) : _buffer;

    public ReadOnlySpan<byte> WrittenSpan => Storage[.._length];

    /// <summary>The written bytes as memory; for a spilled buffer a view object is allocated (not for hot paths).</summary>
    public ReadOnlyMemory<byte> WrittenMemory => _nativeData != null ? new PointerMemoryManager(_nativeData, _capacity).Memory[.._length] : _buffer.AsMemory(0, _length);

    /// <summary>The written bytes, mutable, for in-place patching (e.g. a batch header).</summary>
    public Span<byte> WrittenSpanMutable => Storage[.._length];

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
        ArgumentOutOfRangeException.ThrowIfGreaterThan(count, _capacity - _length);
        _length += count;
    }

    /// <summary>IBufferWriter's memory; for a spilled buffer a view object is allocated (callers on hot paths use <see cref="GetSpan"/>).</summary>
    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        EnsureFree(Math.Max(sizeHint, 1));
        return _nativeData != null ? new PointerMemoryManager(_nativeData, _capacity).Memory[_length..] : _buffer.AsMemory(_length);
    }

    public Span<byte> GetSpan(int sizeHint = 0)
    {
        EnsureFree(Math.Max(sizeHint, 1));
        return Storage[_length..];
    }

    public void Append(ReadOnlySpan<byte> data)
    {
        EnsureFree(data.Length);
        data.CopyTo(Storage[_length..]);
        _length += data.Length;
    }

    public void AppendByte(byte value)
    {
        EnsureFree(1);
        Storage[_length++] = value;
    }

    public void AppendFixed32(uint value)
    {
        EnsureFree(4);
        BinaryPrimitives.WriteUInt32LittleEndian(Storage[_length..], value);
        _length += 4;
    }

    public void AppendFixed64(ulong value)
    {
        EnsureFree(8);
        BinaryPrimitives.WriteUInt64LittleEndian(Storage[_length..], value);
        _length += 8;
    }

    public void AppendVarint32(uint value)
    {
        EnsureFree(Coding.MaxVarint32Length);
        _length += Coding.EncodeVarint32(Storage[_length..], value);
    }

    public void AppendVarint64(ulong value)
    {
        EnsureFree(Coding.MaxVarint64Length);
        _length += Coding.EncodeVarint64(Storage[_length..], value);
    }

    /// <summary>Appends varint32 length then the bytes (RocksDB's PutLengthPrefixedSlice).</summary>
    public void AppendLengthPrefixed(ReadOnlySpan<byte> data)
    {
        AppendVarint32((uint)data.Length);
        Append(data);
    }

    private void EnsureFree(int needed)
    {
        if (_capacity - _length >= needed)
        {
            return;
        }
        long want = Math.Max((long)_capacity * 2, (long)_length + needed);
        if (want > Array.MaxLength)
        {
            want = (long)_length + needed;
            if (want > Array.MaxLength)
            {
                throw new InvalidOperationException("ByteBuffer cannot grow beyond Array.MaxLength.");
            }
        }
        if (_spillToNative && want > BoundedArrayPool<byte>.PooledLimitBytes)
        {
            NativeBuffer grown = NativeAllocator.Shared.Allocate((int)Math.Min(want, SizeClasses.MaxSize), use: NativeUse.BuildBuffer);
            byte* data = grown.Pointer;
            WrittenSpan.CopyTo(new Span<byte>(data, _length));
            NativeBuffer old = _native;
            _native = grown;
            _nativeData = data;
            _capacity = Math.Min(grown.UsableSize, Array.MaxLength);
            old.Dispose(); // no-op when the storage was the pooled array, which stays for after ReleaseLarge
            return;
        }
        byte[] bigger = BoundedArrayPool<byte>.Rent((int)want);
        _buffer.AsSpan(0, _length).CopyTo(bigger);
        BoundedArrayPool<byte>.Return(_buffer);
        _buffer = bigger;
        _capacity = bigger.Length;
    }

    /// <summary>
    /// Empties the buffer and, if it spilled to native memory, frees that (the pooled array is kept
    /// for what comes next). For an owner that reuses the buffer after a large, once-per-table use.
    /// </summary>
    public void ReleaseLarge()
    {
        _length = 0;
        if (_nativeData != null)
        {
            NativeBuffer native = _native;
            _native = default;
            _nativeData = null;
            _capacity = _buffer.Length;
            native.Dispose();
        }
    }

    public void Dispose()
    {
        ReleaseLarge();
        byte[] b = _buffer;
        _buffer = Array.Empty<byte>();
        _capacity = 0;
        BoundedArrayPool<byte>.Return(b);
    }
}
