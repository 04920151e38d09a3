using System.Buffers.Binary;
using System.IO.Hashing;
using System.Text;

namespace KvEngine.Tool.Commands;

/// <summary>
/// RocksDB's unique id of a table (table/unique_id.cc, GetUniqueIdFromTableProperties, as
/// sst_dump prints it): derived from the writer's DB id, session id and the original file number
/// (session lower bits; XXH3-128 of the DB id seeded with the session's upper bits, xor the file
/// number; then RocksDB's bijective mix), printed as two 16-digit hex groups. Null when an input
/// is missing or the session id is malformed, where RocksDB prints "N/A". Stateless.
/// </summary>
internal static class TableUniqueId
{
    private const ulong HiOffsetForZero = 17391078804906429400UL;
    private const ulong LoOffsetForZero = 6417269962128484497UL;

    public static string? Compute(KvTableProperties p)
    {
        if (p.DbId.Length == 0 || p.OriginalFileNumber == 0 || !TryDecodeSessionId(p.DbSessionId, out ulong upper, out ulong lower))
        {
            return null;
        }
        UInt128 h = XxHash128.HashToUInt128(Encoding.UTF8.GetBytes(p.DbId), unchecked((long)upper));
        ulong dbA = (ulong)(h >> 64);
        ulong id0 = lower;
        ulong id1 = dbA ^ p.OriginalFileNumber;
        BijectiveHash(unchecked(id1 + HiOffsetForZero), unchecked(id0 + LoOffsetForZero), out ulong hi, out ulong lo);
        Span<byte> bytes = stackalloc byte[16];
        BinaryPrimitives.WriteUInt64LittleEndian(bytes, lo);
        BinaryPrimitives.WriteUInt64LittleEndian(bytes[8..], hi);
        string hex = Convert.ToHexString(bytes);
        return hex[..16] + "-" + hex[16..];
    }

    private static bool TryDecodeSessionId(string id, out ulong upper, out ulong lower)
    {
        upper = lower = 0;
        if (id.Length is < 13 or > 24 || !TryParseBase36(id.AsSpan(0, id.Length - 12), out ulong a) || !TryParseBase36(id.AsSpan(id.Length - 12), out ulong b))
        {
            return false;
        }
        upper = a >> 2;
        lower = (b & (ulong.MaxValue >> 2)) | (a << 62);
        return true;
    }

    private static bool TryParseBase36(ReadOnlySpan<char> digits, out ulong value)
    {
        value = 0;
        foreach (char c in digits)
        {
            int d = c is >= '0' and <= '9' ? c - '0' : c is >= 'A' and <= 'Z' ? c - 'A' + 10 : c is >= 'a' and <= 'z' ? c - 'a' + 10 : -1;
            if (d < 0)
            {
                return false;
            }
            value = unchecked(value * 36 + (ulong)d);
        }
        return true;
    }

    // RocksDB's BijectiveHash2x64 with seed 0 (adapted from XXH3_len_9to16_128b).
    private static void BijectiveHash(ulong inHigh, ulong inLow, out ulong outHigh, out ulong outLow)
    {
        unchecked
        {
            const ulong bitflipl = 0x59973f0033362349UL;
            const ulong bitfliph = 0xc202797692d63d58UL;
            ulong hi = Math.BigMul(inLow ^ inHigh ^ bitflipl, 0x9E3779B185EBCA87UL, out ulong lo);
            lo += 0x3c0000000000000UL;
            inHigh ^= bitfliph;
            hi += inHigh + ((inHigh & 0xFFFFFFFFUL) * 0x85EBCA76UL);
            lo ^= BinaryPrimitives.ReverseEndianness(hi);
            ulong hi2 = Math.BigMul(lo, 0xC2B2AE3D27D4EB4FUL, out lo);
            hi = hi2 + (hi * 0xC2B2AE3D27D4EB4FUL);
            outLow = Avalanche(lo);
            outHigh = Avalanche(hi);
        }
    }

    private static ulong Avalanche(ulong h)
    {
        unchecked
        {
            h ^= h >> 37;
            h *= 0x165667919E3779F9UL;
            h ^= h >> 32;
            return h;
        }
    }
}
