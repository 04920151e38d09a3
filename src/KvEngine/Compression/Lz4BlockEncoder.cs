using System.Runtime.CompilerServices;

namespace KvEngine.Compression;

/// <summary>
/// LZ4's fast block compressor (LZ4_compress_fast), our own because K4os.Compression.LZ4 took
/// 3-4x the reference LZ4 library's time per 4 KiB block here (docs/benchmarks.md, "Codecs"), and compression is
/// on every flush and compaction. Output is a standard LZ4 block (decoded by K4os, by the reference LZ4 library in
/// RocksDB's tools):
/// <code>
/// block    := sequence* last
/// sequence := token: byte (literal length: high 4 bits, match length - 4: low 4 bits)
///             [literal length - 15 in 255-steps] literals [offset: uint16 LE]
///             [match length - 19 in 255-steps]
/// last     := token (literals only) [length bytes] literals   (at least the last 5 bytes)
/// </code>
/// LZ4's end-of-block rules hold: the last match starts at least 12 bytes before the end and
/// the last 5 bytes are literals. A per-thread hash table of 65,536 positions (4-byte hashes;
/// 256 KiB) is reused across calls without clearing: each call works above a new base, so entries of
/// earlier calls read as "no candidate". LZ4's own 4,096-8,192 entries made a 4 KiB block of
/// half-compressible values run at 364 MB/s here (liblz4: 800); with 65,536 a block's own
/// positions rarely collide, and it ran at 615 MB/s (docs/benchmarks.md, "Codecs"). <c>acceleration</c> &gt; 1 skips ahead faster when
/// nothing matches (RocksDB passes -level for negative levels). Thread-safe (thread-local table).
/// </summary>
internal static unsafe class Lz4BlockEncoder
{
    private const int MinMatch = 4;
    private const int LastLiterals = 5;
    private const int MfLimit = 12;
    private const int HashLog = 16;
    private const int MaxDistance = 65535;
    private const int SkipTrigger = 6;

    /// <summary>LZ4_MAX_INPUT_SIZE.</summary>
    public const int MaxInputSize = 0x7E000000;

    [ThreadStatic]
    private static int[]? t_table;

    [ThreadStatic]
    private static int t_base;

    /// <summary>Compresses <paramref name="source"/>; the block length, or 0 when it does not fit <paramref name="destination"/>.</summary>
    public static int Compress(ReadOnlySpan<byte> source, Span<byte> destination, int acceleration)
    {
        int length = source.Length;
        if (length > MaxInputSize || destination.IsEmpty)
        {
            return 0;
        }
        acceleration = Math.Clamp(acceleration, 1, 65537);
        int[] table = t_table ??= new int[1 << HashLog];
        // Positions of this call are stored as baseOffset + position; anything below is stale.
        if (t_base > int.MaxValue - length - 1)
        {
            Array.Clear(table);
            t_base = 0;
        }
        int baseOffset = t_base + 1;
        t_base = baseOffset + length;

        fixed (byte* src = source)
        fixed (byte* dst = destination)
        fixed (int* hashTable = table)
        {
            byte* op = dst;
            byte* oend = dst + destination.Length;
            byte* anchor = src;
            byte* iend = src + length;
            if (length >= MfLimit + 1)
            {
                byte* ip = src;
                byte* mflimitPlusOne = iend - MfLimit + 1;
                byte* matchLimit = iend - LastLiterals;
                hashTable[Hash(ip)] = baseOffset;
                ip++;
                uint forwardH = Hash(ip);
                while (true)
                {
                    // Find a match, stepping faster the longer nothing matches.
                    ip = FindMatch(ip, forwardH, src, hashTable, baseOffset, mflimitPlusOne, acceleration << SkipTrigger, out byte* match);
                    if (ip == null)
                    {
                        goto LastLiteralsLabel;
                    }
                    // Extend the match backwards over equal bytes.
                    while (ip > anchor && match > src && ip[-1] == match[-1])
                    {
                        ip--;
                        match--;
                    }
                    int literalLength = (int)(ip - anchor);
                    byte* token = op++;
                    if (op + literalLength + (literalLength / 255) + 1 + 2 + 1 + LastLiterals > oend)
                    {
                        return 0;
                    }
                    op = WriteLength(op, token, literalLength, 4);
                    Buffer.MemoryCopy(anchor, op, literalLength, literalLength);
                    op += literalLength;

                    while (true)
                    {
                        // Offset, then the match length beyond the first 4 bytes.
                        int offset = (int)(ip - match);
                        op[0] = (byte)offset;
                        op[1] = (byte)(offset >> 8);
                        op += 2;
                        int matchLength = MatchLength.Count(ip + MinMatch, match + MinMatch, matchLimit);
                        ip += matchLength + MinMatch;
                        if (op + (matchLength / 255) + 1 + 1 + LastLiterals > oend)
                        {
                            return 0;
                        }
                        op = WriteLength(op, token, matchLength, 0);
                        anchor = ip;
                        if (ip >= mflimitPlusOne - 1)
                        {
                            goto LastLiteralsLabel;
                        }
                        hashTable[Hash(ip - 2)] = baseOffset + (int)(ip - 2 - src);
                        // A match right here continues without literals.
                        uint h = Hash(ip);
                        int candidate = hashTable[h] - baseOffset;
                        hashTable[h] = baseOffset + (int)(ip - src);
                        match = src + candidate;
                        if (candidate >= 0 && ip - match <= MaxDistance && Read32(match) == Read32(ip))
                        {
                            token = op++;
                            *token = 0;
                            continue;
                        }
                        break;
                    }
                    forwardH = Hash(++ip);
                }
            }
        LastLiteralsLabel:
            int lastRun = (int)(iend - anchor);
            if (op + 1 + (lastRun / 255) + 1 + lastRun > oend)
            {
                return 0;
            }
            byte* lastToken = op++;
            op = WriteLength(op, lastToken, lastRun, 4);
            Buffer.MemoryCopy(anchor, op, lastRun, lastRun);
            op += lastRun;
            return (int)(op - dst);
        }
    }

    /// <summary>
    /// The search from <paramref name="ip"/> (whose hash is <paramref name="forwardH"/>): records each
    /// position it passes in the table and returns the first whose 4 bytes equal its candidate's,
    /// with the candidate in <paramref name="match"/>; null once the next position would pass
    /// <paramref name="mflimitPlusOne"/>. A method of its own so that its few variables stay in
    /// registers: inlined into <see cref="Compress"/>, the JIT spilled the candidate and the
    /// position to the stack on every step (2.2x liblz4's time per block; docs/benchmarks.md, "Codecs").
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static byte* FindMatch(byte* ip, uint forwardH, byte* src, int* hashTable, int baseOffset, byte* mflimitPlusOne, int searchMatchNb,
        out byte* match)
    {
        byte* forwardIp = ip;
        int step = 1;
        while (true)
        {
            uint h = forwardH;
            ip = forwardIp;
            forwardIp += step;
            step = searchMatchNb++ >> SkipTrigger;
            if (forwardIp > mflimitPlusOne)
            {
                match = null;
                return null;
            }
            int candidate = hashTable[h] - baseOffset;
            forwardH = Hash(forwardIp);
            hashTable[h] = baseOffset + (int)(ip - src);
            if (candidate >= 0 && ip - (src + candidate) <= MaxDistance && Read32(src + candidate) == Read32(ip))
            {
                match = src + candidate;
                return ip;
            }
        }
    }

    /// <summary>Puts <paramref name="value"/> in the token nibble at <paramref name="shift"/>, with 255-steps after 15.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static byte* WriteLength(byte* op, byte* token, int value, int shift)
    {
        if (value < 15)
        {
            *token = shift == 4 ? (byte)(value << 4) : (byte)(*token | value);
            return op;
        }
        *token = shift == 4 ? (byte)(15 << 4) : (byte)(*token | 15);
        value -= 15;
        while (value >= 255)
        {
            *op++ = 255;
            value -= 255;
        }
        *op++ = (byte)value;
        return op;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint Read32(byte* p) => Unsafe.ReadUnaligned<uint>(p);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint Hash(byte* p) => (Read32(p) * 2654435761U) >> (32 - HashLog);
}
