using System.Buffers.Binary;
using System.Numerics;
using KvEngine.Util;

namespace KvEngine.Table;

/// <summary>
/// XXH32 and XXH64 with seed 0 (xxHash 0.8, from doc/xxhash_spec.md), only for reading and writing
/// tables with RocksDB's older kxxHash and kxxHash64 block checksums. Each hashes the concatenation
/// of <c>head</c> and a short <c>tail</c> (the block and its type byte) without copying the block.
/// Stateless and thread-safe.
/// </summary>
internal static class LegacyXxHash
{
    private const uint P32_1 = (uint)XxHashConstants.Prime32_1;
    private const uint P32_2 = (uint)XxHashConstants.Prime32_2;
    private const uint P32_3 = (uint)XxHashConstants.Prime32_3;
    private const uint P32_4 = (uint)XxHashConstants.Prime32_4;
    private const uint P32_5 = (uint)XxHashConstants.Prime32_5;
    private const ulong P64_1 = XxHashConstants.Prime64_1;
    private const ulong P64_2 = XxHashConstants.Prime64_2;
    private const ulong P64_3 = XxHashConstants.Prime64_3;
    private const ulong P64_4 = XxHashConstants.Prime64_4;
    private const ulong P64_5 = XxHashConstants.Prime64_5;

    /// <summary>XXH32(head ++ tail, seed 0); <paramref name="tail"/> must be at most 16 bytes.</summary>
    public static uint Hash32(ReadOnlySpan<byte> head, ReadOnlySpan<byte> tail)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThan(tail.Length, 16);
        long total = (long)head.Length + tail.Length;
        uint v1 = unchecked(P32_1 + P32_2), v2 = P32_2, v3 = 0, v4 = unchecked(0 - P32_1);
        int full = head.Length / 16 * 16;
        for (int i = 0; i < full; i += 16)
        {
            Round32(ref v1, ref v2, ref v3, ref v4, head.Slice(i, 16));
        }
        Span<byte> rest = stackalloc byte[32];
        head[full..].CopyTo(rest);
        tail.CopyTo(rest[(head.Length - full)..]);
        int restLength = head.Length - full + tail.Length;
        int p = 0;
        if (restLength >= 16)
        {
            Round32(ref v1, ref v2, ref v3, ref v4, rest[..16]);
            p = 16;
        }
        uint h = total >= 16
            ? BitOperations.RotateLeft(v1, 1) + BitOperations.RotateLeft(v2, 7) + BitOperations.RotateLeft(v3, 12) + BitOperations.RotateLeft(v4, 18)
            : P32_5;
        h += (uint)total;
        for (; p + 4 <= restLength; p += 4)
        {
            h += BinaryPrimitives.ReadUInt32LittleEndian(rest[p..]) * P32_3;
            h = BitOperations.RotateLeft(h, 17) * P32_4;
        }
        for (; p < restLength; p++)
        {
            h += rest[p] * P32_5;
            h = BitOperations.RotateLeft(h, 11) * P32_1;
        }
        h ^= h >> 15;
        h *= P32_2;
        h ^= h >> 13;
        h *= P32_3;
        return h ^ (h >> 16);
    }

    /// <summary>XXH64(head ++ tail, seed 0); <paramref name="tail"/> must be at most 32 bytes.</summary>
    public static ulong Hash64(ReadOnlySpan<byte> head, ReadOnlySpan<byte> tail)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThan(tail.Length, 32);
        long total = (long)head.Length + tail.Length;
        ulong v1 = unchecked(P64_1 + P64_2), v2 = P64_2, v3 = 0, v4 = unchecked(0 - P64_1);
        int full = head.Length / 32 * 32;
        for (int i = 0; i < full; i += 32)
        {
            Round64(ref v1, ref v2, ref v3, ref v4, head.Slice(i, 32));
        }
        Span<byte> rest = stackalloc byte[64];
        head[full..].CopyTo(rest);
        tail.CopyTo(rest[(head.Length - full)..]);
        int restLength = head.Length - full + tail.Length;
        int p = 0;
        if (restLength >= 32)
        {
            Round64(ref v1, ref v2, ref v3, ref v4, rest[..32]);
            p = 32;
        }
        ulong h;
        if (total >= 32)
        {
            h = BitOperations.RotateLeft(v1, 1) + BitOperations.RotateLeft(v2, 7) + BitOperations.RotateLeft(v3, 12) + BitOperations.RotateLeft(v4, 18);
            h = MergeRound(h, v1);
            h = MergeRound(h, v2);
            h = MergeRound(h, v3);
            h = MergeRound(h, v4);
        }
        else
        {
            h = P64_5;
        }
        h += (ulong)total;
        for (; p + 8 <= restLength; p += 8)
        {
            h ^= Lane64(0, BinaryPrimitives.ReadUInt64LittleEndian(rest[p..]));
            h = (BitOperations.RotateLeft(h, 27) * P64_1) + P64_4;
        }
        if (p + 4 <= restLength)
        {
            h ^= BinaryPrimitives.ReadUInt32LittleEndian(rest[p..]) * P64_1;
            h = (BitOperations.RotateLeft(h, 23) * P64_2) + P64_3;
            p += 4;
        }
        for (; p < restLength; p++)
        {
            h ^= rest[p] * P64_5;
            h = BitOperations.RotateLeft(h, 11) * P64_1;
        }
        h ^= h >> 33;
        h *= P64_2;
        h ^= h >> 29;
        h *= P64_3;
        return h ^ (h >> 32);
    }

    private static void Round32(ref uint v1, ref uint v2, ref uint v3, ref uint v4, ReadOnlySpan<byte> stripe)
    {
        v1 = Lane32(v1, BinaryPrimitives.ReadUInt32LittleEndian(stripe));
        v2 = Lane32(v2, BinaryPrimitives.ReadUInt32LittleEndian(stripe[4..]));
        v3 = Lane32(v3, BinaryPrimitives.ReadUInt32LittleEndian(stripe[8..]));
        v4 = Lane32(v4, BinaryPrimitives.ReadUInt32LittleEndian(stripe[12..]));
    }

    private static void Round64(ref ulong v1, ref ulong v2, ref ulong v3, ref ulong v4, ReadOnlySpan<byte> stripe)
    {
        v1 = Lane64(v1, BinaryPrimitives.ReadUInt64LittleEndian(stripe));
        v2 = Lane64(v2, BinaryPrimitives.ReadUInt64LittleEndian(stripe[8..]));
        v3 = Lane64(v3, BinaryPrimitives.ReadUInt64LittleEndian(stripe[16..]));
        v4 = Lane64(v4, BinaryPrimitives.ReadUInt64LittleEndian(stripe[24..]));
    }

    private static uint Lane32(uint acc, uint lane) => BitOperations.RotateLeft(acc + (lane * P32_2), 13) * P32_1;

    private static ulong Lane64(ulong acc, ulong lane) => BitOperations.RotateLeft(acc + (lane * P64_2), 31) * P64_1;

    private static ulong MergeRound(ulong acc, ulong v) => ((acc ^ Lane64(0, v)) * P64_1) + P64_4;
}
