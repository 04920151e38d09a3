using System.Buffers.Binary;
using System.Runtime.CompilerServices;

namespace KvEngine.Format;

/// <summary>
/// Internal keys, RocksDB's dbformat:
/// <code>
/// InternalKey := user_key: byte[n] trailer: fixed64   // trailer = (sequence &lt;&lt; 8) | type
/// </code>
/// Stateless and thread-safe.
/// </summary>
internal static class InternalKeys
{
    public const int TrailerSize = 8;

    /// <summary>Largest sequence number: 2^56 - 1.</summary>
    public const ulong MaxSequenceNumber = (1UL << 56) - 1;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong PackTrailer(ulong sequence, ValueType type) => (sequence << 8) | (byte)type;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ReadOnlySpan<byte> UserKey(ReadOnlySpan<byte> internalKey) => internalKey[..^TrailerSize];

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong Trailer(ReadOnlySpan<byte> internalKey) =>
        BinaryPrimitives.ReadUInt64LittleEndian(internalKey[^TrailerSize..]);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong Sequence(ReadOnlySpan<byte> internalKey) => Trailer(internalKey) >> 8;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ValueType Type(ReadOnlySpan<byte> internalKey) => (ValueType)(byte)Trailer(internalKey);

    /// <summary>True when the key is long enough to carry a trailer and its type is one we store.</summary>
    public static bool IsValid(ReadOnlySpan<byte> internalKey)
    {
        if (internalKey.Length < TrailerSize)
        {
            return false;
        }
        ValueType t = Type(internalKey);
        return t is ValueType.Deletion or ValueType.Value or ValueType.Merge or ValueType.SingleDeletion
            or ValueType.RangeDeletion;
    }

    /// <summary>Writes user key + trailer into <paramref name="destination"/>; returns the length.</summary>
    public static int Encode(Span<byte> destination, ReadOnlySpan<byte> userKey, ulong sequence, ValueType type)
    {
        userKey.CopyTo(destination);
        BinaryPrimitives.WriteUInt64LittleEndian(destination[userKey.Length..], PackTrailer(sequence, type));
        return userKey.Length + TrailerSize;
    }

    /// <summary>Builds a heap internal key (tests, cold paths).</summary>
    public static byte[] Create(ReadOnlySpan<byte> userKey, ulong sequence, ValueType type)
    {
        var k = new byte[userKey.Length + TrailerSize];
        Encode(k, userKey, sequence, type);
        return k;
    }
}
