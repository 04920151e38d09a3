using System.Runtime.CompilerServices;
using ZstdSharp.Unsafe;

namespace KvEngine.Compression;

/// <summary>
/// The match finder of Zstandard's "double fast" strategy (ZSTD_dfast, what levels 3 and 4 use),
/// our own because ZstdSharp.Port's port runs it as one generic method that takes the minimum
/// match as an argument, and it was half of a Zstd block's compression time (docs/benchmarks.md,
/// "Codecs"). It only finds matches: it turns a block into Zstandard sequences
/// (literal length, raw offset, match length; the literals after the last sequence are implied),
/// and ZstdSharp's ZSTD_compressSequences encodes them (Huffman literals, FSE sequence codes,
/// repeat offsets) into a standard frame that any Zstandard decoder reads.
/// <para>
/// The search, per position: a hash of the next 8 bytes into the long table and of the next 4
/// into the short one (each holds the last position with that hash); a repeat of the last offset
/// at the next position wins, then an 8-byte match from the long table, then a 4-byte match from
/// the short table (extended to an 8-byte one at the next position when the long table has it).
/// Matches extend backwards over pending literals. With nothing found the step grows by one every
/// 256 bytes. After a match, the table learns positions inside it and the second-last offset is
/// tried as an immediate repeat. Every match lies inside the block (offsets at most the position),
/// is at least 4 bytes and ends at most where the block ends; the last 8 bytes start no match
/// search (their matches extend into them).
/// </para>
/// <para>
/// Tables of 2^<see cref="LongLog"/> and 2^<see cref="ShortLog"/> positions (384 KiB) per thread,
/// reused across calls without clearing: positions are stored above a base that grows with every
/// call, so an entry at or below the current base is stale. Thread-safe (thread-local tables).
/// </para>
/// </summary>
internal static unsafe class ZstdMatchFinder
{
    /// <summary>Minimum match (ZSTD's minMatch for these levels' small-source parameters).</summary>
    private const int MinMatch = 4;

    /// <summary>Bytes every search position reads ahead (the long hash).</summary>
    private const int HashReadSize = 8;

    /// <summary>
    /// log2 of the long table's entries (the short table has half): larger than ZSTD's 13 for a 4 KiB
    /// source, because a candidate from a stale call costs a compare against the base, one from this
    /// call a read of the block and (mostly) a mispredicted branch; with 2^16 entries a 4 KiB block's
    /// search ran in 8.9 us against 15.8 with 2^13 (docs/benchmarks.md, "Codecs").
    /// </summary>
    private const int LongLog = 16;

    private const int ShortLog = LongLog - 1;

    /// <summary>Step growth while nothing matches: one more byte every this many bytes (ZSTD's kSearchStrength 8).</summary>
    private const int StepIncrement = 1 << 8;

    private const uint Prime4Bytes = 2654435761U;
    private const ulong Prime8Bytes = 0xCF1BBCDCB7A56463UL;

    [ThreadStatic]
    private static uint[]? t_tables;

    [ThreadStatic]
    private static uint t_base;

    /// <summary>The most sequences a block of <paramref name="length"/> bytes yields.</summary>
    public static int MaxSequences(int length) => length / MinMatch + 1;

    /// <summary>
    /// Finds the sequences of <paramref name="length"/> bytes at <paramref name="src"/> into
    /// <paramref name="sequences"/> (room for <see cref="MaxSequences"/>); returns their count.
    /// The bytes after the last sequence's match are the block's last literals.
    /// </summary>
    public static int FindSequences(byte* src, int length, ZSTD_Sequence* sequences)
    {
        if (length < HashReadSize + MinMatch)
        {
            return 0;
        }
        uint[] tables = t_tables ??= new uint[(1 << LongLog) + (1 << ShortLog)];
        if (t_base > uint.MaxValue - (uint)length - 2)
        {
            Array.Clear(tables);
            t_base = 0;
        }
        // Positions of this call are stored as position + baseIndex; anything at or below baseIndex is stale
        // (position 0 is never a candidate: nothing precedes it).
        uint baseIndex = t_base + 1;
        t_base = baseIndex + (uint)length;

        fixed (uint* all = tables)
        {
            uint* hashLong = all;
            uint* hashShort = all + (1 << LongLog);
            byte* istart = src;
            byte* iend = src + length;
            byte* ilimit = iend - HashReadSize;
            byte* anchor = istart;
            byte* ip = istart + 1; // position 0 cannot match
            uint offset1 = 0;
            uint offset2 = 0;
            int count = 0;
            byte* start = istart - baseIndex; // start + stored index = the position's address

            while (ip < ilimit)
            {
                int step = 1;
                byte* nextStep = ip + StepIncrement;
                byte* ip1 = ip + step;
                uint hl0 = HashLong(ip, LongLog);
                uint idxl0 = hashLong[hl0];
                uint mLength;
                uint offset;
                uint curr;
                bool repeat = false;
                while (true)
                {
                    uint hs0 = HashShort(ip, ShortLog);
                    uint idxs0 = hashShort[hs0];
                    curr = (uint)(ip - start);
                    hashLong[hl0] = curr;
                    hashShort[hs0] = curr;

                    // A repeat of the last offset one byte ahead.
                    if (offset1 > 0 && Read32(ip + 1 - offset1) == Read32(ip + 1))
                    {
                        mLength = (uint)MatchLength.Count(ip + 1 + 4, ip + 1 + 4 - offset1, iend) + 4;
                        ip++;
                        offset = offset1;
                        repeat = true;
                        break;
                    }

                    uint hl1 = HashLong(ip1, LongLog);
                    if (idxl0 > baseIndex && Read64(start + idxl0) == Read64(ip))
                    {
                        byte* match = start + idxl0;
                        mLength = (uint)MatchLength.Count(ip + 8, match + 8, iend) + 8;
                        offset = (uint)(ip - match);
                        CatchUp(ref ip, ref match, anchor, istart, ref mLength);
                        if (step < 4)
                        {
                            hashLong[hl1] = (uint)(ip1 - start); // below the match's end: the step is under the minimum match
                        }
                        break;
                    }

                    uint idxl1 = hashLong[hl1];
                    if (idxs0 > baseIndex && Read32(start + idxs0) == Read32(ip))
                    {
                        // A short match: prefer an 8-byte match at the next position.
                        if (idxl1 > baseIndex && Read64(start + idxl1) == Read64(ip1))
                        {
                            byte* match = start + idxl1;
                            ip = ip1;
                            mLength = (uint)MatchLength.Count(ip + 8, match + 8, iend) + 8;
                            offset = (uint)(ip - match);
                            CatchUp(ref ip, ref match, anchor, istart, ref mLength);
                        }
                        else
                        {
                            byte* match = start + idxs0;
                            mLength = (uint)MatchLength.Count(ip + 4, match + 4, iend) + 4;
                            offset = (uint)(ip - match);
                            CatchUp(ref ip, ref match, anchor, istart, ref mLength);
                        }
                        if (step < 4)
                        {
                            hashLong[hl1] = (uint)(ip1 - start);
                        }
                        break;
                    }

                    if (ip1 >= nextStep)
                    {
                        step++;
                        nextStep += StepIncrement;
                    }
                    ip = ip1;
                    ip1 += step;
                    hl0 = hl1;
                    idxl0 = idxl1;
                    if (ip1 > ilimit)
                    {
                        goto done;
                    }
                }

                if (!repeat)
                {
                    offset2 = offset1;
                    offset1 = offset;
                }
                ZSTD_Sequence* s = sequences + count++;
                s->litLength = (uint)(ip - anchor);
                s->offset = offset;
                s->matchLength = mLength;
                s->rep = 0;
                ip += mLength;
                anchor = ip;

                if (ip <= ilimit)
                {
                    // Learn positions inside the match (ZSTD: curr + 2, and the two before its end).
                    uint inside = curr + 2;
                    hashLong[HashLong(start + inside, LongLog)] = inside;
                    hashLong[HashLong(ip - 2, LongLog)] = (uint)(ip - 2 - start);
                    hashShort[HashShort(start + inside, ShortLog)] = inside;
                    hashShort[HashShort(ip - 1, ShortLog)] = (uint)(ip - 1 - start);

                    // Immediate repeats of the second-last offset (they swap the two).
                    while (ip <= ilimit && offset2 > 0 && Read32(ip) == Read32(ip - offset2))
                    {
                        uint rLength = (uint)MatchLength.Count(ip + 4, ip + 4 - offset2, iend) + 4;
                        (offset1, offset2) = (offset2, offset1);
                        uint at = (uint)(ip - start);
                        hashShort[HashShort(ip, ShortLog)] = at;
                        hashLong[HashLong(ip, LongLog)] = at;
                        s = sequences + count++;
                        s->litLength = 0;
                        s->offset = offset1;
                        s->matchLength = rLength;
                        s->rep = 0;
                        ip += rLength;
                        anchor = ip;
                    }
                }
            }
        done:
            return count;
        }
    }

    /// <summary>Extends a match backwards over the pending literals.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void CatchUp(ref byte* ip, ref byte* match, byte* anchor, byte* istart, ref uint mLength)
    {
        while (ip > anchor && match > istart && ip[-1] == match[-1])
        {
            ip--;
            match--;
            mLength++;
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint HashShort(byte* p, int log) => (Read32(p) * Prime4Bytes) >> (32 - log);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint HashLong(byte* p, int log) => (uint)((Read64(p) * Prime8Bytes) >> (64 - log));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint Read32(byte* p) => Unsafe.ReadUnaligned<uint>(p);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong Read64(byte* p) => Unsafe.ReadUnaligned<ulong>(p);
}
