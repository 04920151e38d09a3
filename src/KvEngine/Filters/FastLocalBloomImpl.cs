namespace KvEngine.Filters;

/// <summary>
/// The bit layout of RocksDB's FastLocalBloom (util/bloom_impl.h FastLocalBloomImpl). A key's 64-bit
/// hash <c>h</c> is split: <c>h1 = lo32(h)</c> picks one 64-byte line with
/// <c>(uint64(h1) * numLines) &gt;&gt; 32</c>; <c>h2 = hi32(h)</c> drives the probes: for each probe the
/// top 9 bits <c>h2 &gt;&gt; 23</c> address a bit of the 512-bit line (byte <c>bit &gt;&gt; 3</c>, bit
/// <c>bit &amp; 7</c> counting from the least significant), then <c>h2 *= 0x9E3779B9</c> (mod 2^32).
/// Stateless and thread-safe; callers pass a span holding whole lines.
/// </summary>
internal static class FastLocalBloomImpl
{
    /// <summary>The 32-bit golden ratio that remixes <c>h2</c> between probes.</summary>
    public const uint ProbeMultiplier = 0x9E3779B9;

    /// <summary>Byte offset of the line for <paramref name="h1"/> among <paramref name="numLines"/> lines (FastRange32).</summary>
    public static int LineOffset(uint h1, uint numLines) =>
        (int)(((ulong)h1 * numLines) >> 32) * FastLocalBloomMath.CacheLineBytes;

    /// <summary>Sets the probe bits of <paramref name="h2"/> in one 64-byte line.</summary>
    public static void AddHashPrepared(uint h2, int numProbes, Span<byte> line)
    {
        line = line.Slice(0, FastLocalBloomMath.CacheLineBytes);
        uint h = h2;
        for (int i = 0; i < numProbes; i++, h *= ProbeMultiplier)
        {
            int bit = (int)(h >> 23);
            line[bit >> 3] |= (byte)(1 << (bit & 7));
        }
    }

    /// <summary>True when every probe bit of <paramref name="h2"/> is set in the 64-byte line.</summary>
    public static bool HashMayMatchPrepared(uint h2, int numProbes, ReadOnlySpan<byte> line)
    {
        line = line.Slice(0, FastLocalBloomMath.CacheLineBytes);
        uint h = h2;
        for (int i = 0; i < numProbes; i++, h *= ProbeMultiplier)
        {
            int bit = (int)(h >> 23);
            if ((line[bit >> 3] & (1 << (bit & 7))) == 0)
            {
                return false;
            }
        }
        return true;
    }

    /// <summary>Adds a 64-bit key hash to a filter's bit array of <paramref name="numLines"/> lines.</summary>
    public static void AddHash(ulong hash, uint numLines, int numProbes, Span<byte> bits)
    {
        int offset = LineOffset((uint)hash, numLines);
        AddHashPrepared((uint)(hash >> 32), numProbes, bits.Slice(offset));
    }

    /// <summary>Queries a 64-bit key hash against a filter's bit array of <paramref name="numLines"/> lines.</summary>
    public static bool HashMayMatch(ulong hash, uint numLines, int numProbes, ReadOnlySpan<byte> bits)
    {
        int offset = LineOffset((uint)hash, numLines);
        return HashMayMatchPrepared((uint)(hash >> 32), numProbes, bits.Slice(offset));
    }
}
