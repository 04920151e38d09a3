namespace KvEngine.Filters;

/// <summary>
/// Queries a FastLocalBloom filter block written by RocksDB (format_version 5) or by
/// <see cref="FastLocalBloomBitsBuilder"/>. Holds the block's bit array (trailer excluded), whose
/// length is at least one 64-byte line; any tail shorter than a line is ignored, as RocksDB does.
/// Immutable and lock-free; a query hashes the key and reads one line, without allocating.
/// </summary>
internal sealed class FastLocalBloomBitsReader : IFilterBitsReader
{
    private readonly ReadOnlyMemory<byte> _bits;
    private readonly uint _numLines;
    private readonly int _numProbes;

    /// <param name="bits">The filter's bit array without its trailer (at least 64 bytes).</param>
    /// <param name="numProbes">Probes per key, 1..30.</param>
    public FastLocalBloomBitsReader(ReadOnlyMemory<byte> bits, int numProbes)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(bits.Length, FastLocalBloomMath.CacheLineBytes);
        ArgumentOutOfRangeException.ThrowIfLessThan(numProbes, 1);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(numProbes, 30);
        _bits = bits;
        _numLines = (uint)(bits.Length / FastLocalBloomMath.CacheLineBytes);
        _numProbes = numProbes;
    }

    public int NumProbes => _numProbes;

    public int NumLines => (int)_numLines;

    public bool MayMatch(ReadOnlySpan<byte> key) => HashMayMatch(XxPh3.Hash64(key));

    /// <summary>Queries by a key's <see cref="XxPh3.Hash64(ReadOnlySpan{byte})"/> hash.</summary>
    public bool HashMayMatch(ulong hash) =>
        FastLocalBloomImpl.HashMayMatch(hash, _numLines, _numProbes, _bits.Span);
}
