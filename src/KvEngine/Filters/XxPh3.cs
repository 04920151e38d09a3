using System.Buffers.Binary;

using static KvEngine.Filters.XxPh3Constants;

namespace KvEngine.Filters;

/// <summary>
/// RocksDB's <c>Hash64</c> / <c>GetSliceHash64</c>: XXPH3, the xxHash 0.7.2 "preview" of XXH3
/// (RocksDB util/xxph3.h) with RocksDB's change for the empty input. It is part of the on-disk
/// format of the FastLocalBloom and Ribbon filters, and it is not the released XXH3 (xxHash 0.8):
/// inputs longer than 240 bytes accumulate differently (no lane swap, different block and last-stripe
/// rules) and the empty input hashes the seed instead of returning 0.
/// That is why this is our own code while block checksums use System.IO.Hashing's XxHash3: no
/// package computes the preview function, and filters RocksDB wrote must probe the same bits.
/// Stateless, allocation-free and thread-safe. All reads are little-endian, so results are the same
/// on every platform.
/// </summary>
internal static class XxPh3
{

    private const int StripeLength = 64;
    private const int SecretConsumeRate = 8;
    private const int SecretSize = XxPh3Constants.SecretLength;
    private const int SecretSizeMin = 136;
    private const int MidSizeMax = 240;
    private const int MidSizeStartOffset = 3;
    private const int MidSizeLastOffset = 17;
    private const int SecretLastAccStart = 7;
    private const int SecretMergeAccsStart = 11;

    private static ReadOnlySpan<byte> DefaultSecret => XxPh3Constants.DefaultSecret;

    /// <summary>RocksDB's <c>GetSliceHash64(data)</c> = <c>Hash64(data, n, seed 0)</c>.</summary>
    public static ulong Hash64(ReadOnlySpan<byte> data) => Hash64(data, 0);

    /// <summary>RocksDB's <c>Hash64(data, n, seed)</c> (XXPH3_64bits_withSeed).</summary>
    public static ulong Hash64(ReadOnlySpan<byte> data, ulong seed)
    {
        ReadOnlySpan<byte> secret = DefaultSecret;
        int length = data.Length;
        if (length <= 16)
        {
            return Length0To16(data, secret, seed);
        }
        if (length <= 128)
        {
            return Length17To128(data, secret, seed);
        }
        if (length <= MidSizeMax)
        {
            return Length129To240(data, secret, seed);
        }
        if (seed == 0)
        {
            return HashLong(data, secret);
        }
        Span<byte> custom = stackalloc byte[SecretSize];
        InitCustomSecret(custom, seed);
        return HashLong(data, custom);
    }

    private static ulong Length0To16(ReadOnlySpan<byte> input, ReadOnlySpan<byte> secret, ulong seed)
    {
        int length = input.Length;
        if (length > 8)
        {
            ulong lo = ReadLE64(input, 0) ^ (ReadLE64(secret, 0) + seed);
            ulong hi = ReadLE64(input, length - 8) ^ (ReadLE64(secret, 8) - seed);
            ulong acc = (ulong)length + (lo + hi) + Mul128Fold64(lo, hi);
            return Avalanche(acc);
        }
        if (length >= 4)
        {
            ulong inputLo = BinaryPrimitives.ReadUInt32LittleEndian(input);
            ulong inputHi = BinaryPrimitives.ReadUInt32LittleEndian(input.Slice(length - 4));
            ulong input64 = inputLo | (inputHi << 32);
            ulong keyed = input64 ^ (ReadLE64(secret, 0) + seed);
            ulong mix64 = (ulong)length + ((keyed ^ (keyed >> 51)) * Prime32_1);
            return Avalanche((mix64 ^ (mix64 >> 47)) * Prime64_2);
        }
        if (length > 0)
        {
            uint c1 = input[0];
            uint c2 = input[length >> 1];
            uint c3 = input[length - 1];
            uint combined = c1 | (c2 << 8) | (c3 << 16) | ((uint)length << 24);
            ulong keyed = combined ^ (BinaryPrimitives.ReadUInt32LittleEndian(secret) + seed);
            return Avalanche(keyed * Prime64_1);
        }
        // RocksDB's change to the preview: the empty input hashes the seed rather than giving 0.
        return Mul128Fold64(seed + ReadLE64(secret, 0), Prime64_2);
    }

    private static ulong Length17To128(ReadOnlySpan<byte> input, ReadOnlySpan<byte> secret, ulong seed)
    {
        int length = input.Length;
        ulong acc = (ulong)length * Prime64_1;
        if (length > 32)
        {
            if (length > 64)
            {
                if (length > 96)
                {
                    acc += Mix16(input, 48, secret, 96, seed);
                    acc += Mix16(input, length - 64, secret, 112, seed);
                }
                acc += Mix16(input, 32, secret, 64, seed);
                acc += Mix16(input, length - 48, secret, 80, seed);
            }
            acc += Mix16(input, 16, secret, 32, seed);
            acc += Mix16(input, length - 32, secret, 48, seed);
        }
        acc += Mix16(input, 0, secret, 0, seed);
        acc += Mix16(input, length - 16, secret, 16, seed);
        return Avalanche(acc);
    }

    private static ulong Length129To240(ReadOnlySpan<byte> input, ReadOnlySpan<byte> secret, ulong seed)
    {
        int length = input.Length;
        ulong acc = (ulong)length * Prime64_1;
        int rounds = length / 16;
        for (int i = 0; i < 8; i++)
        {
            acc += Mix16(input, 16 * i, secret, 16 * i, seed);
        }
        acc = Avalanche(acc);
        for (int i = 8; i < rounds; i++)
        {
            acc += Mix16(input, 16 * i, secret, (16 * (i - 8)) + MidSizeStartOffset, seed);
        }
        acc += Mix16(input, length - 16, secret, SecretSizeMin - MidSizeLastOffset, seed);
        return Avalanche(acc);
    }

    private static ulong HashLong(ReadOnlySpan<byte> input, ReadOnlySpan<byte> secret)
    {
        Span<ulong> acc = stackalloc ulong[8];
        XxPh3Constants.InitAccumulators(acc);

        int length = input.Length;
        int stripesPerBlock = (secret.Length - StripeLength) / SecretConsumeRate;
        int blockLength = StripeLength * stripesPerBlock;
        int blocks = length / blockLength;
        ReadOnlySpan<byte> scrambleSecret = secret.Slice(secret.Length - StripeLength);
        for (int n = 0; n < blocks; n++)
        {
            Accumulate(acc, input.Slice(n * blockLength), secret, stripesPerBlock);
            ScrambleAcc(acc, scrambleSecret);
        }

        // Last partial block, then (unlike released XXH3) a last stripe only when the length is
        // not a whole number of stripes.
        int stripes = (length - (blockLength * blocks)) / StripeLength;
        Accumulate(acc, input.Slice(blocks * blockLength), secret, stripes);
        if ((length & (StripeLength - 1)) != 0)
        {
            Accumulate512(acc, input.Slice(length - StripeLength),
                secret.Slice(secret.Length - StripeLength - SecretLastAccStart));
        }

        ulong result = (ulong)length * Prime64_1;
        ReadOnlySpan<byte> mergeSecret = secret.Slice(SecretMergeAccsStart);
        for (int i = 0; i < 4; i++)
        {
            result += Mul128Fold64(
                acc[2 * i] ^ ReadLE64(mergeSecret, 16 * i),
                acc[(2 * i) + 1] ^ ReadLE64(mergeSecret, (16 * i) + 8));
        }
        return Avalanche(result);
    }

    private static void Accumulate(Span<ulong> acc, ReadOnlySpan<byte> input, ReadOnlySpan<byte> secret, int stripes)
    {
        for (int n = 0; n < stripes; n++)
        {
            Accumulate512(acc, input.Slice(n * StripeLength), secret.Slice(n * SecretConsumeRate));
        }
    }

    // The 64-bit accumulator variant: each lane adds its own input word (no lane swap).
    private static void Accumulate512(Span<ulong> acc, ReadOnlySpan<byte> input, ReadOnlySpan<byte> secret)
    {
        for (int i = 0; i < 8; i++)
        {
            ulong dataValue = ReadLE64(input, 8 * i);
            ulong dataKey = dataValue ^ ReadLE64(secret, 8 * i);
            acc[i] += dataValue + ((dataKey & 0xFFFFFFFFUL) * (dataKey >> 32));
        }
    }

    private static void ScrambleAcc(Span<ulong> acc, ReadOnlySpan<byte> secret)
    {
        for (int i = 0; i < 8; i++)
        {
            ulong a = acc[i];
            a ^= a >> 47;
            a ^= ReadLE64(secret, 8 * i);
            a *= Prime32_1;
            acc[i] = a;
        }
    }

    private static void InitCustomSecret(Span<byte> custom, ulong seed)
    {
        ReadOnlySpan<byte> secret = DefaultSecret;
        for (int i = 0; i < SecretSize / 16; i++)
        {
            BinaryPrimitives.WriteUInt64LittleEndian(custom.Slice(16 * i), ReadLE64(secret, 16 * i) + seed);
            BinaryPrimitives.WriteUInt64LittleEndian(custom.Slice((16 * i) + 8), ReadLE64(secret, (16 * i) + 8) - seed);
        }
    }

    private static ulong Mix16(ReadOnlySpan<byte> input, int inputOffset, ReadOnlySpan<byte> secret, int secretOffset, ulong seed)
    {
        ulong lo = ReadLE64(input, inputOffset);
        ulong hi = ReadLE64(input, inputOffset + 8);
        return Mul128Fold64(
            lo ^ (ReadLE64(secret, secretOffset) + seed),
            hi ^ (ReadLE64(secret, secretOffset + 8) - seed));
    }

    private static ulong Mul128Fold64(ulong lhs, ulong rhs)
    {
        ulong high = Math.BigMul(lhs, rhs, out ulong low);
        return low ^ high;
    }

    private static ulong Avalanche(ulong h)
    {
        h ^= h >> 37;
        h *= Prime64_3;
        h ^= h >> 32;
        return h;
    }

    private static ulong ReadLE64(ReadOnlySpan<byte> data, int offset) =>
        BinaryPrimitives.ReadUInt64LittleEndian(data.Slice(offset));
}
