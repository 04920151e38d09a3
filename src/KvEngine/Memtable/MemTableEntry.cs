using System.Buffers.Binary;
using System.Runtime.CompilerServices;
using KvEngine.Format;
using KvEngine.Util;

namespace KvEngine.Memtable;

/// <summary>
/// The encoding of one memtable entry in arena memory, RocksDB's memtable entry:
/// <code>
/// MemTableEntry := internal_key_len: varint32 internal_key: byte[internal_key_len]
///                  value_len: varint32 value: byte[value_len]
/// internal_key  := user_key: byte[internal_key_len - 8] trailer: fixed64   // (seq &lt;&lt; 8) | type
/// </code>
/// Entries are written only by <see cref="Encode"/>, so the decoders trust them (no bounds checks:
/// they read our own memory, not input). Stateless and thread-safe.
/// </summary>
internal static unsafe class MemTableEntry
{
    /// <summary>
    /// Largest encoded entry we accept. It leaves room, inside a 32-bit allocation size, for a
    /// skiplist node's pointers and the arena's alignment.
    /// </summary>
    public const int MaxEncodedSize = int.MaxValue - 1024;

    /// <summary>
    /// The encoded size of an entry, or false when a key of <paramref name="userKeyLength"/> bytes
    /// and a value of <paramref name="valueLength"/> bytes cannot be encoded in one allocation.
    /// </summary>
    public static bool TryGetEncodedSize(int userKeyLength, int valueLength, out int size)
    {
        size = 0;
        if (userKeyLength < 0 || valueLength < 0)
        {
            return false;
        }
        long internalKeyLength = (long)userKeyLength + InternalKeys.TrailerSize;
        long total = Coding.VarintLength((ulong)internalKeyLength) + internalKeyLength
            + Coding.VarintLength((ulong)valueLength) + valueLength;
        if (total > MaxEncodedSize)
        {
            return false;
        }
        size = (int)total;
        return true;
    }

    /// <summary>Writes an entry of exactly the size <see cref="TryGetEncodedSize"/> reported.</summary>
    public static void Encode(byte* dst, ReadOnlySpan<byte> userKey, ulong trailer, ReadOnlySpan<byte> value)
    {
        byte* p = EncodeVarint32(dst, (uint)(userKey.Length + InternalKeys.TrailerSize));
        userKey.CopyTo(new Span<byte>(p, userKey.Length));
        p += userKey.Length;
        BinaryPrimitives.WriteUInt64LittleEndian(new Span<byte>(p, InternalKeys.TrailerSize), trailer);
        p += InternalKeys.TrailerSize;
        p = EncodeVarint32(p, (uint)value.Length);
        value.CopyTo(new Span<byte>(p, value.Length));
    }

    /// <summary>The internal key of the entry at <paramref name="entry"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ReadOnlySpan<byte> InternalKey(byte* entry)
    {
        uint length = *entry;
        if (length < 0x80)
        {
            return new ReadOnlySpan<byte>(entry + 1, (int)length);
        }
        byte* p = DecodeVarint32Slow(entry, out length);
        return new ReadOnlySpan<byte>(p, (int)length);
    }

    /// <summary>The value of the entry at <paramref name="entry"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ReadOnlySpan<byte> Value(byte* entry)
    {
        byte* p = DecodeVarint32(entry, out uint keyLength);
        p = DecodeVarint32(p + keyLength, out uint valueLength);
        return new ReadOnlySpan<byte>(p, (int)valueLength);
    }

    /// <summary>Decodes the internal key and the value of the entry at <paramref name="entry"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void Decode(byte* entry, out ReadOnlySpan<byte> internalKey, out ReadOnlySpan<byte> value)
    {
        byte* p = DecodeVarint32(entry, out uint keyLength);
        internalKey = new ReadOnlySpan<byte>(p, (int)keyLength);
        p = DecodeVarint32(p + keyLength, out uint valueLength);
        value = new ReadOnlySpan<byte>(p, (int)valueLength);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static byte* DecodeVarint32(byte* p, out uint value)
    {
        uint b = *p;
        if (b < 0x80)
        {
            value = b;
            return p + 1;
        }
        return DecodeVarint32Slow(p, out value);
    }

    private static byte* DecodeVarint32Slow(byte* p, out uint value)
    {
        // Our own encoding: at most 5 bytes, the last without the continuation bit.
        uint result = 0;
        for (int shift = 0; shift < 35; shift += 7)
        {
            uint b = *p++;
            result |= (b & 0x7F) << shift;
            if (b < 0x80)
            {
                break;
            }
        }
        value = result;
        return p;
    }

    private static byte* EncodeVarint32(byte* p, uint value)
    {
        while (value >= 0x80)
        {
            *p++ = (byte)(value | 0x80);
            value >>= 7;
        }
        *p++ = (byte)value;
        return p;
    }
}
