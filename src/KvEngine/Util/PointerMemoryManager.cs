using System.Buffers;

namespace KvEngine.Util;

/// <summary>
/// A <see cref="Memory{T}"/> over unmanaged or pinned bytes: for APIs that take memory (a
/// <see cref="ReadOnlySequence{T}"/> segment, an <see cref="IBufferWriter{T}"/>'s GetMemory) when the
/// bytes are native, or a span the caller keeps pinned. Valid only while those bytes are: the
/// creator guarantees it (a spilled <see cref="ByteBuffer"/>'s storage, a fixed span for the
/// length of one call). Pinning does nothing (the bytes never move); disposing frees nothing.
/// Immutable; thread-safe as the bytes it views are.
/// </summary>
internal sealed unsafe class PointerMemoryManager(byte* data, int length) : MemoryManager<byte>
{
    public override Span<byte> GetSpan() => new(data, length);

    public override MemoryHandle Pin(int elementIndex = 0) => new(data + elementIndex);

    public override void Unpin()
    {
    }

    protected override void Dispose(bool disposing)
    {
    }
}
