using KvEngine.Util;

namespace KvEngine.Table;

/// <summary>
/// Where a block sits in a table file (its trailer follows it and is not counted in Size).
/// <code>
/// BlockHandle := offset: varint64  size: varint64
/// </code>
/// Immutable value.
/// </summary>
internal readonly record struct BlockHandle(ulong Offset, ulong Size)
{
    /// <summary>Two varint64s of at most 10 bytes each.</summary>
    public const int MaxEncodedLength = 20;

    /// <summary>Writes the handle to <paramref name="destination"/> (20 bytes suffice); returns the length.</summary>
    public int EncodeTo(Span<byte> destination)
    {
        int n = Coding.EncodeVarint64(destination, Offset);
        return n + Coding.EncodeVarint64(destination[n..], Size);
    }

    public void EncodeTo(ByteBuffer output)
    {
        output.AppendVarint64(Offset);
        output.AppendVarint64(Size);
    }

    /// <summary>Reads a handle and advances <paramref name="input"/>; false when malformed or truncated.</summary>
    public static bool TryDecode(ref ReadOnlySpan<byte> input, out BlockHandle handle)
    {
        ReadOnlySpan<byte> p = input;
        if (Coding.TryGetVarint64(ref p, out ulong offset) && Coding.TryGetVarint64(ref p, out ulong size))
        {
            handle = new BlockHandle(offset, size);
            input = p;
            return true;
        }
        handle = default;
        return false;
    }

    public override string ToString() => $"[offset {Offset}, size {Size}]";
}
