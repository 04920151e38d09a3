using System.Buffers.Binary;
using System.Runtime.CompilerServices;

namespace KvEngine.Util;

/// <summary>
/// Little-endian fixed-width and LEB128 varint encoding, as RocksDB's util/coding.h defines it.
/// Decoders never read past the span they are given and report malformed input by returning false.
/// Stateless and thread-safe.
/// </summary>
internal static class Coding
{
    public const int MaxVarint32Length = 5;
    public const int MaxVarint64Length = 10;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static uint DecodeFixed32(ReadOnlySpan<byte> src) => BinaryPrimitives.ReadUInt32LittleEndian(src);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong DecodeFixed64(ReadOnlySpan<byte> src) => BinaryPrimitives.ReadUInt64LittleEndian(src);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void EncodeFixed32(Span<byte> dst, uint value) => BinaryPrimitives.WriteUInt32LittleEndian(dst, value);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void EncodeFixed64(Span<byte> dst, ulong value) => BinaryPrimitives.WriteUInt64LittleEndian(dst, value);

    /// <summary>Number of bytes the varint encoding of <paramref name="value"/> takes.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int VarintLength(ulong value)
    {
        int len = 1;
        while (value >= 0x80)
        {
            value >>= 7;
            len++;
        }
        return len;
    }

    /// <summary>Writes a varint32 and returns the bytes written. <paramref name="dst"/> must hold 5.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int EncodeVarint32(Span<byte> dst, uint value) => EncodeVarint64(dst, value);

    /// <summary>Writes a varint64 and returns the bytes written. <paramref name="dst"/> must hold 10.</summary>
    public static int EncodeVarint64(Span<byte> dst, ulong value)
    {
        int i = 0;
        while (value >= 0x80)
        {
            dst[i++] = (byte)(value | 0x80);
            value >>= 7;
        }
        dst[i++] = (byte)value;
        return i;
    }

    /// <summary>Reads a varint32; false when the input is truncated or longer than 5 bytes or overflows.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool TryDecodeVarint32(ReadOnlySpan<byte> src, out uint value, out int consumed)
    {
        if (src.Length > 0 && src[0] < 0x80)
        {
            value = src[0];
            consumed = 1;
            return true;
        }
        return TryDecodeVarint32Slow(src, out value, out consumed);
    }

    private static bool TryDecodeVarint32Slow(ReadOnlySpan<byte> src, out uint value, out int consumed)
    {
        uint result = 0;
        for (int i = 0, shift = 0; i < src.Length && i < MaxVarint32Length; i++, shift += 7)
        {
            uint b = src[i];
            if (i == 4 && b > 0x0F)
            {
                break; // would overflow 32 bits
            }
            result |= (b & 0x7F) << shift;
            if (b < 0x80)
            {
                value = result;
                consumed = i + 1;
                return true;
            }
        }
        value = 0;
        consumed = 0;
        return false;
    }

    /// <summary>Reads a varint64; false when the input is truncated, longer than 10 bytes or overflows.</summary>
    public static bool TryDecodeVarint64(ReadOnlySpan<byte> src, out ulong value, out int consumed)
    {
        ulong result = 0;
        for (int i = 0, shift = 0; i < src.Length && i < MaxVarint64Length; i++, shift += 7)
        {
            ulong b = src[i];
            if (i == 9 && b > 1)
            {
                break; // would overflow 64 bits
            }
            result |= (b & 0x7F) << shift;
            if (b < 0x80)
            {
                value = result;
                consumed = i + 1;
                return true;
            }
        }
        value = 0;
        consumed = 0;
        return false;
    }

    /// <summary>
    /// Reads a varint32 length prefix and that many bytes, advancing <paramref name="src"/> past both.
    /// False when either is truncated.
    /// </summary>
    public static bool TryGetLengthPrefixed(scoped ref ReadOnlySpan<byte> src, out ReadOnlySpan<byte> slice)
    {
        if (!TryDecodeVarint32(src, out uint len, out int n) || (ulong)src.Length - (ulong)n < len)
        {
            slice = default;
            return false;
        }
        slice = src.Slice(n, (int)len);
        src = src.Slice(n + (int)len);
        return true;
    }

    /// <summary>Reads a varint32 and advances <paramref name="src"/> past it.</summary>
    public static bool TryGetVarint32(scoped ref ReadOnlySpan<byte> src, out uint value)
    {
        if (!TryDecodeVarint32(src, out value, out int n))
        {
            return false;
        }
        src = src.Slice(n);
        return true;
    }

    /// <summary>Reads a varint64 and advances <paramref name="src"/> past it.</summary>
    public static bool TryGetVarint64(scoped ref ReadOnlySpan<byte> src, out ulong value)
    {
        if (!TryDecodeVarint64(src, out value, out int n))
        {
            return false;
        }
        src = src.Slice(n);
        return true;
    }
}
