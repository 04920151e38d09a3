using System.Buffers.Binary;
using System.Runtime.CompilerServices;

namespace KvEngine.Format;

/// <summary>
/// The first 8 bytes of a user key as a big-endian number, zero-padded: keys in bytewise order have
/// prefixes in the same order (not strictly: keys sharing 8 bytes tie, and "ab" ties with "ab\0").
/// So a prefix above another proves the key above, and equal prefixes prove nothing. Searches use
/// it to decide most comparisons without touching the key. Stateless and thread-safe.
/// </summary>
internal static class KeyPrefix
{
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong Of(ReadOnlySpan<byte> userKey)
    {
        if (userKey.Length >= sizeof(ulong))
        {
            return BinaryPrimitives.ReadUInt64BigEndian(userKey);
        }
        return OfShort(userKey);
    }

    private static ulong OfShort(ReadOnlySpan<byte> userKey)
    {
        ulong prefix = 0;
        for (int i = 0; i < userKey.Length; i++)
        {
            prefix |= (ulong)userKey[i] << (56 - (8 * i));
        }
        return prefix;
    }

    /// <summary>The prefix of an internal key's user key.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong OfInternalKey(ReadOnlySpan<byte> internalKey) => Of(internalKey[..^InternalKeys.TrailerSize]);
}
