namespace KvEngine.Memory;

/// <summary>
/// One allocation from a <see cref="NativeAllocator"/>: <see cref="Length"/> bytes asked for, inside
/// <see cref="UsableSize"/> bytes (the size class) that all belong to the caller. The variable that
/// received it from <see cref="NativeAllocator.Allocate"/> is its one owner; <see cref="Dispose"/>
/// (once) returns it. Copies of the struct are views that must not outlive the owner's Dispose.
/// With the allocator's debug checks on, touching a freed buffer through <see cref="Span"/> or
/// <see cref="Pointer"/>, or freeing it twice, throws; without them those are undefined behaviour.
/// The default value is "no allocation": zero length, disposal does nothing.
/// </summary>
internal readonly unsafe struct NativeBuffer : IDisposable
{
    private readonly NativeAllocator? _owner;
    private readonly byte* _pointer;
    private readonly int _length;
    private readonly int _usableSize;
    private readonly long _tag;

    internal NativeBuffer(NativeAllocator owner, byte* pointer, int length, int usableSize, long tag)
    {
        _owner = owner;
        _pointer = pointer;
        _length = length;
        _usableSize = usableSize;
        _tag = tag;
    }

    /// <summary>False for the default value.</summary>
    public bool IsAllocated => _owner != null;

    /// <summary>Bytes requested.</summary>
    public int Length => _length;

    /// <summary>Bytes usable: the size class of <see cref="Length"/> (0 for the default value).</summary>
    public int UsableSize => _usableSize;

    /// <summary>Start of the allocation (aligned to at least 16 bytes).</summary>
    public byte* Pointer
    {
        get
        {
            CheckLive();
            return _pointer;
        }
    }

    /// <summary>The requested bytes.</summary>
    public Span<byte> Span
    {
        get
        {
            CheckLive();
            return new Span<byte>(_pointer, _length);
        }
    }

    /// <summary>All usable bytes (the requested ones and the size class's tail).</summary>
    public Span<byte> UsableSpan
    {
        get
        {
            CheckLive();
            return new Span<byte>(_pointer, _usableSize);
        }
    }

    internal NativeAllocator? Owner => _owner;

    internal byte* RawPointer => _pointer;

    internal long Tag => _tag;

    /// <summary>Returns the allocation to its allocator. Does nothing for the default value.</summary>
    public void Dispose() => _owner?.Free(this);

    private void CheckLive()
    {
        if (_owner != null)
        {
            _owner.CheckLive(this);
        }
    }
}
