using System.Buffers.Binary;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.X86;

using static KvEngine.Util.XxHashConstants;

namespace KvEngine.Util;

/// <summary>
/// XXH3-64 with seed 0 and the default 192-byte secret, as released in xxHash 0.8 (the function
/// RocksDB's kXXH3 block checksum calls). Written from the xxHash specification
/// (doc/xxhash_spec.md): input lengths 0, 1-3, 4-8, 9-16, 17-128, 129-240 and the striped
/// accumulator loop above 240 bytes; the loop uses AVX2 where the CPU has it (a 4 KiB block is
/// checksummed on every table block read) and scalar code otherwise. Allocation-free, stateless,
/// thread-safe.
/// </summary>
internal static class XxHash3
{
    private const ulong PrimeMx1 = 0x165667919E3779F9UL;
    private const ulong PrimeMx2 = 0x9FB21C651E98DF25UL;

    private const int SecretLength = XxHashConstants.SecretLength;
    private const int StripeLength = 64;
    private const int SecretConsumeRate = 8;
    private const int StripesPerBlock = (SecretLength - StripeLength) / SecretConsumeRate; // 16
    private const int BlockLength = StripeLength * StripesPerBlock; // 1024
    private const int MidSizeMax = 240;
    private const int MidSizeStartOffset = 3;
    private const int MidSizeLastOffset = 17;
    private const int SecretLastAccStart = 7;
    private const int SecretMergeAccsStart = 11;

    private static ReadOnlySpan<byte> Secret => XxHashConstants.DefaultSecret;

    /// <summary>XXH3_64bits(data) with seed 0.</summary>
    public static ulong Hash64(ReadOnlySpan<byte> data)
    {
        int len = data.Length;
        if (len <= 16)
        {
            return HashUpTo16(data);
        }
        if (len <= 128)
        {
            return Hash17To128(data);
        }
        if (len <= MidSizeMax)
        {
            return Hash129To240(data);
        }
        return HashLong(data);
    }

    private static ulong HashUpTo16(ReadOnlySpan<byte> data)
    {
        ReadOnlySpan<byte> s = Secret;
        int len = data.Length;
        if (len > 8)
        {
            ulong lo = (R64(s, 24) ^ R64(s, 32)) ^ R64(data, 0);
            ulong hi = (R64(s, 40) ^ R64(s, 48)) ^ R64(data, len - 8);
            ulong acc = (ulong)len + BinaryPrimitives.ReverseEndianness(lo) + hi + Mul128Fold64(lo, hi);
            return Avalanche(acc);
        }
        if (len >= 4)
        {
            ulong first = R32(data, 0);
            ulong last = R32(data, len - 4);
            ulong combined = last | (first << 32);
            ulong v = (R64(s, 8) ^ R64(s, 16)) ^ combined;
            v ^= BitOperations.RotateLeft(v, 49) ^ BitOperations.RotateLeft(v, 24);
            v *= PrimeMx2;
            v ^= (v >> 35) + (ulong)len;
            v *= PrimeMx2;
            return v ^ (v >> 28);
        }
        if (len > 0)
        {
            uint c1 = data[0];
            uint c2 = data[len >> 1];
            uint c3 = data[len - 1];
            uint combined = (c1 << 16) | (c2 << 24) | c3 | ((uint)len << 8);
            ulong v = (ulong)(R32(s, 0) ^ R32(s, 4)) ^ combined;
            return AvalancheXxh64(v);
        }
        return AvalancheXxh64(R64(s, 56) ^ R64(s, 64));
    }

    private static ulong Hash17To128(ReadOnlySpan<byte> data)
    {
        ReadOnlySpan<byte> s = Secret;
        int len = data.Length;
        ulong acc = (ulong)len * Prime64_1;
        if (len > 32)
        {
            if (len > 64)
            {
                if (len > 96)
                {
                    acc += Mix16(data, 48, s, 96);
                    acc += Mix16(data, len - 64, s, 112);
                }
                acc += Mix16(data, 32, s, 64);
                acc += Mix16(data, len - 48, s, 80);
            }
            acc += Mix16(data, 16, s, 32);
            acc += Mix16(data, len - 32, s, 48);
        }
        acc += Mix16(data, 0, s, 0);
        acc += Mix16(data, len - 16, s, 16);
        return Avalanche(acc);
    }

    private static ulong Hash129To240(ReadOnlySpan<byte> data)
    {
        ReadOnlySpan<byte> s = Secret;
        int len = data.Length;
        ulong acc = (ulong)len * Prime64_1;
        for (int i = 0; i < 8; i++)
        {
            acc += Mix16(data, 16 * i, s, 16 * i);
        }
        acc = Avalanche(acc);
        int rounds = len / 16;
        for (int i = 8; i < rounds; i++)
        {
            acc += Mix16(data, 16 * i, s, (16 * (i - 8)) + MidSizeStartOffset);
        }
        acc += Mix16(data, len - 16, s, 136 - MidSizeLastOffset);
        return Avalanche(acc);
    }

    /// <summary>The scalar reference path for inputs over 240 bytes (tests compare the vector path with it).</summary>
    internal static ulong HashLongScalar(ReadOnlySpan<byte> data) => HashLong(data, allowVector: false);

    private static ulong HashLong(ReadOnlySpan<byte> data, bool allowVector = true)
    {
        ReadOnlySpan<byte> s = Secret;
        Span<ulong> acc = stackalloc ulong[8];
        XxHashConstants.InitAccumulators(acc);

        if (allowVector && Avx2.IsSupported)
        {
            AccumulateAllAvx2(acc, data);
        }
        else
        {
            AccumulateAllScalar(acc, data, s);
        }

        ulong result = (ulong)data.Length * Prime64_1;
        for (int i = 0; i < 4; i++)
        {
            int so = SecretMergeAccsStart + (16 * i);
            result += Mul128Fold64(acc[2 * i] ^ R64(s, so), acc[(2 * i) + 1] ^ R64(s, so + 8));
        }
        return Avalanche(result);
    }

    private static void AccumulateAllScalar(Span<ulong> acc, ReadOnlySpan<byte> data, ReadOnlySpan<byte> s)
    {
        int len = data.Length;
        int blocks = (len - 1) / BlockLength;
        for (int b = 0; b < blocks; b++)
        {
            int blockStart = b * BlockLength;
            for (int n = 0; n < StripesPerBlock; n++)
            {
                Accumulate(acc, data, blockStart + (n * StripeLength), s, n * SecretConsumeRate);
            }
            Scramble(acc, s, SecretLength - StripeLength);
        }

        int lastBlockStart = blocks * BlockLength;
        int stripes = (len - 1 - lastBlockStart) / StripeLength;
        for (int n = 0; n < stripes; n++)
        {
            Accumulate(acc, data, lastBlockStart + (n * StripeLength), s, n * SecretConsumeRate);
        }
        Accumulate(acc, data, len - StripeLength, s, SecretLength - StripeLength - SecretLastAccStart);
    }

    /// <summary>The same stripe loop as <see cref="AccumulateAllScalar"/>, four lanes per AVX2 op.</summary>
    private static unsafe void AccumulateAllAvx2(Span<ulong> acc, ReadOnlySpan<byte> data)
    {
        int len = data.Length;
        fixed (byte* d = data)
        fixed (byte* s = Secret)
        fixed (ulong* a = acc)
        {
            Vector256<ulong> acc0 = Avx.LoadVector256(a);
            Vector256<ulong> acc1 = Avx.LoadVector256(a + 4);
            Vector256<uint> prime = Vector256.Create((uint)Prime32_1);
            int blocks = (len - 1) / BlockLength;
            for (int b = 0; b < blocks; b++)
            {
                byte* block = d + (b * BlockLength);
                for (int n = 0; n < StripesPerBlock; n++)
                {
                    AccumulateStripeAvx2(ref acc0, ref acc1, block + (n * StripeLength), s + (n * SecretConsumeRate));
                }
                ScrambleAvx2(ref acc0, s + (SecretLength - StripeLength), prime);
                ScrambleAvx2(ref acc1, s + (SecretLength - StripeLength) + 32, prime);
            }
            int lastBlockStart = blocks * BlockLength;
            int stripes = (len - 1 - lastBlockStart) / StripeLength;
            for (int n = 0; n < stripes; n++)
            {
                AccumulateStripeAvx2(ref acc0, ref acc1, d + lastBlockStart + (n * StripeLength), s + (n * SecretConsumeRate));
            }
            AccumulateStripeAvx2(ref acc0, ref acc1, d + len - StripeLength, s + (SecretLength - StripeLength - SecretLastAccStart));
            Avx.Store(a, acc0);
            Avx.Store(a + 4, acc1);
        }
    }

    // acc[i ^ 1] += d[i]; acc[i] += lo32(k[i]) * hi32(k[i]) with k = d ^ secret, for 8 lanes.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static unsafe void AccumulateStripeAvx2(ref Vector256<ulong> acc0, ref Vector256<ulong> acc1, byte* data, byte* secret)
    {
        Vector256<ulong> d0 = Avx.LoadVector256((ulong*)data);
        Vector256<ulong> d1 = Avx.LoadVector256((ulong*)(data + 32));
        Vector256<ulong> k0 = Avx2.Xor(d0, Avx.LoadVector256((ulong*)secret));
        Vector256<ulong> k1 = Avx2.Xor(d1, Avx.LoadVector256((ulong*)(secret + 32)));
        Vector256<ulong> p0 = Avx2.Multiply(k0.AsUInt32(), Avx2.ShiftRightLogical(k0, 32).AsUInt32());
        Vector256<ulong> p1 = Avx2.Multiply(k1.AsUInt32(), Avx2.ShiftRightLogical(k1, 32).AsUInt32());
        Vector256<ulong> s0 = Avx2.Shuffle(d0.AsUInt32(), 0b01_00_11_10).AsUInt64();
        Vector256<ulong> s1 = Avx2.Shuffle(d1.AsUInt32(), 0b01_00_11_10).AsUInt64();
        acc0 = Avx2.Add(acc0, Avx2.Add(s0, p0));
        acc1 = Avx2.Add(acc1, Avx2.Add(s1, p1));
    }

    // a = (a ^ (a >> 47) ^ secret) * PRIME32_1, the 64x32 multiply done as two 32x32 products.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static unsafe void ScrambleAvx2(ref Vector256<ulong> acc, byte* secret, Vector256<uint> prime)
    {
        Vector256<ulong> a = Avx2.Xor(acc, Avx2.ShiftRightLogical(acc, 47));
        a = Avx2.Xor(a, Avx.LoadVector256((ulong*)secret));
        Vector256<ulong> lo = Avx2.Multiply(a.AsUInt32(), prime);
        Vector256<ulong> hi = Avx2.Multiply(Avx2.ShiftRightLogical(a, 32).AsUInt32(), prime);
        acc = Avx2.Add(lo, Avx2.ShiftLeftLogical(hi, 32));
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void Accumulate(Span<ulong> acc, ReadOnlySpan<byte> data, int offset, ReadOnlySpan<byte> s, int secretOffset)
    {
        for (int i = 0; i < 8; i++)
        {
            ulong d = R64(data, offset + (8 * i));
            ulong k = d ^ R64(s, secretOffset + (8 * i));
            acc[i ^ 1] += d;
            acc[i] += (k & 0xFFFFFFFFUL) * (k >> 32);
        }
    }

    private static void Scramble(Span<ulong> acc, ReadOnlySpan<byte> s, int secretOffset)
    {
        for (int i = 0; i < 8; i++)
        {
            ulong a = acc[i];
            a ^= a >> 47;
            a ^= R64(s, secretOffset + (8 * i));
            acc[i] = a * Prime32_1;
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong Mix16(ReadOnlySpan<byte> data, int offset, ReadOnlySpan<byte> s, int secretOffset) =>
        Mul128Fold64(R64(data, offset) ^ R64(s, secretOffset), R64(data, offset + 8) ^ R64(s, secretOffset + 8));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong Mul128Fold64(ulong a, ulong b)
    {
        ulong hi = Math.BigMul(a, b, out ulong lo);
        return lo ^ hi;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong Avalanche(ulong h)
    {
        h ^= h >> 37;
        h *= PrimeMx1;
        return h ^ (h >> 32);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong AvalancheXxh64(ulong h)
    {
        h ^= h >> 33;
        h *= Prime64_2;
        h ^= h >> 29;
        h *= Prime64_3;
        return h ^ (h >> 32);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong R64(ReadOnlySpan<byte> b, int offset) => BinaryPrimitives.ReadUInt64LittleEndian(b[offset..]);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint R32(ReadOnlySpan<byte> b, int offset) => BinaryPrimitives.ReadUInt32LittleEndian(b[offset..]);
}
