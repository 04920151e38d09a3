using KvEngine.Cache;
using KvEngine.Memory;

namespace KvEngine.Tests.Cache;

/// <summary>A cache value over a native buffer that counts how often it is freed.</summary>
internal sealed class TestValue : CacheValue
{
    private NativeBuffer _buffer;
    private int _freed;

    public TestValue(NativeAllocator allocator, ReadOnlySpan<byte> bytes, CacheEntryRole role = CacheEntryRole.Data)
    {
        _buffer = allocator.Allocate(bytes.Length);
        bytes.CopyTo(_buffer.Span);
        Role = role;
    }

    public TestValue(NativeBuffer buffer, CacheEntryRole role)
    {
        _buffer = buffer;
        Role = role;
    }

    public override CacheEntryRole Role { get; }

    public override long RequestedBytes => _buffer.Length;

    public override long AllocatedBytes => _buffer.UsableSize;

    public override bool CanDemote => true;

    public override ReadOnlySpan<byte> Contents => _buffer.Span;

    public bool Freed => Volatile.Read(ref _freed) != 0;

    public override void Free()
    {
        if (Interlocked.Exchange(ref _freed, 1) != 0)
        {
            throw new InvalidOperationException("Value freed twice.");
        }
        _buffer.Dispose();
        _buffer = default;
    }
}
