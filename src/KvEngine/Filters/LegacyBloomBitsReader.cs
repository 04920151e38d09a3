namespace KvEngine.Filters;

/// <summary>
/// Queries a legacy full Bloom filter (RocksDB format_version &lt; 5, LegacyLocalityBloomImpl without
/// extra rotates). Trailer: probes byte (1..127), fixed32 numLines. The key's 32-bit
/// <see cref="LegacyBloomHash.BloomHash"/> <c>h</c> picks line <c>h % numLines</c>; each probe tests bit
/// <c>h &amp; (lineBits - 1)</c> of that line, then <c>h += rotr(h, 17)</c>. Lines are a power of two
/// bytes (64 on the writing machine, usually). Immutable and lock-free.
/// </summary>
internal sealed class LegacyBloomBitsReader : IFilterBitsReader
{
    private readonly ReadOnlyMemory<byte> _bits;
    private readonly uint _numLines;
    private readonly int _numProbes;
    private readonly int _log2LineBytes;
    private readonly uint _bitMask;

    /// <param name="bits">The bit array without its trailer: exactly numLines lines.</param>
    /// <param name="numProbes">Probes per key (1..127).</param>
    /// <param name="numLines">Lines in the bit array.</param>
    /// <param name="log2LineBytes">Log2 of the line size in bytes.</param>
    public LegacyBloomBitsReader(ReadOnlyMemory<byte> bits, int numProbes, uint numLines, int log2LineBytes)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(numProbes, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(numLines, 1u);
        ArgumentOutOfRangeException.ThrowIfNegative(log2LineBytes);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(log2LineBytes, 30);
        if (((ulong)numLines << log2LineBytes) != (ulong)bits.Length)
        {
            throw new ArgumentException("numLines lines of 2^log2LineBytes bytes must fill the bit array.", nameof(bits));
        }
        _bits = bits;
        _numLines = numLines;
        _numProbes = numProbes;
        _log2LineBytes = log2LineBytes;
        int log2LineBits = log2LineBytes + 3;
        _bitMask = log2LineBits >= 32 ? uint.MaxValue : (1u << log2LineBits) - 1;
    }

    public bool MayMatch(ReadOnlySpan<byte> key)
    {
        uint h = LegacyBloomHash.BloomHash(key);
        ReadOnlySpan<byte> line = _bits.Span.Slice((int)((h % _numLines) << _log2LineBytes), 1 << _log2LineBytes);
        uint delta = (h >> 17) | (h << 15);
        for (int i = 0; i < _numProbes; i++)
        {
            uint bit = h & _bitMask;
            if ((line[(int)(bit >> 3)] & (1 << (int)(bit & 7))) == 0)
            {
                return false;
            }
            h += delta;
        }
        return true;
    }
}
