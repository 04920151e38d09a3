namespace KvEngine.Filters;

/// <summary>
/// Byte values of the 5-byte trailer that ends every RocksDB built-in filter block. The first
/// trailer byte, read as a signed char, is a legacy Bloom probe count when 1..127, otherwise a
/// marker. Persisted: never renumber.
/// </summary>
internal static class FilterTrailer
{
    /// <summary>First trailer byte (-1): a newer Bloom implementation; the next byte says which.</summary>
    public const byte NewBloomMarker = 0xFF;

    /// <summary>First trailer byte (-2): a Ribbon filter (Standard128Ribbon).</summary>
    public const byte RibbonMarker = 0xFE;

    /// <summary>Second trailer byte after <see cref="NewBloomMarker"/>: FastLocalBloom.</summary>
    public const byte FastLocalBloomSubImpl = 0;

    /// <summary>Mask of the probe count in the third trailer byte of a new Bloom filter.</summary>
    public const byte ProbesMask = 0x1F;
}
