using System.Numerics;
using System.Runtime.CompilerServices;

namespace KvEngine.Compression;

/// <summary>
/// How far two positions of one buffer hold the same bytes: the match extension of our LZ4 and
/// Zstd compressors (LZ4_count, ZSTD_count), 8 bytes at a time. Stateless and thread-safe.
/// </summary>
internal static unsafe class MatchLength
{
    /// <summary>
    /// Bytes equal at <paramref name="input"/> and <paramref name="match"/>, reading no further than
    /// <paramref name="limit"/> on the input side (the match side lies before the input).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int Count(byte* input, byte* match, byte* limit)
    {
        byte* start = input;
        if (BitConverter.IsLittleEndian)
        {
            while (input < limit - 7)
            {
                ulong diff = Unsafe.ReadUnaligned<ulong>(match) ^ Unsafe.ReadUnaligned<ulong>(input);
                if (diff != 0)
                {
                    return (int)(input - start) + (BitOperations.TrailingZeroCount(diff) >> 3);
                }
                input += 8;
                match += 8;
            }
        }
        while (input < limit && *input == *match)
        {
            input++;
            match++;
        }
        return (int)(input - start);
    }
}
