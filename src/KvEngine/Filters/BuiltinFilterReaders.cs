using System.Buffers.Binary;

namespace KvEngine.Filters;

/// <summary>
/// Picks the reader for a RocksDB built-in filter block from its 5-byte trailer, as RocksDB 7.8's
/// BuiltinFilterPolicy::GetBuiltinFilterBitsReader does:
/// <list type="bullet">
/// <item>5 bytes or fewer: built from zero keys, never matches.</item>
/// <item>first trailer byte 0xFF, then sub-implementation 0, probes 1..30 in the low 5 bits with
/// 64-byte lines (top 3 bits 0), two zero bytes: FastLocalBloom.</item>
/// <item>first trailer byte 1..127: legacy Bloom (probes, fixed32 line count).</item>
/// <item>anything else (Ribbon marker 0xFE, reserved markers, reserved fields set, sizes that do not
/// fit): always may match, so an unknown filter never causes a false negative.</item>
/// </list>
/// Where RocksDB would read past a too-short bit array (a FastLocalBloom block with no whole line)
/// this answers "always may match" instead. Never throws for bad contents. Stateless, thread-safe.
/// </summary>
internal static class BuiltinFilterReaders
{
    /// <summary>Wraps <paramref name="filterBlock"/> (bits and trailer); the reader keeps a reference to it.</summary>
    public static IFilterBitsReader Create(ReadOnlyMemory<byte> filterBlock)
    {
        int lenWithMeta = filterBlock.Length;
        if (lenWithMeta <= FastLocalBloomMath.MetadataLength)
        {
            return AlwaysFalseFilterReader.Instance;
        }
        int len = lenWithMeta - FastLocalBloomMath.MetadataLength;
        ReadOnlySpan<byte> trailer = filterBlock.Span.Slice(len);
        sbyte rawProbes = (sbyte)trailer[0];
        if (rawProbes < 1)
        {
            return trailer[0] == FilterTrailer.NewBloomMarker
                ? CreateNewBloom(filterBlock.Slice(0, len), trailer)
                : AlwaysTrueFilterReader.Instance; // 0 probes, Ribbon, or reserved markers
        }
        return CreateLegacyBloom(filterBlock.Slice(0, len), rawProbes, trailer);
    }

    private static IFilterBitsReader CreateNewBloom(ReadOnlyMemory<byte> bits, ReadOnlySpan<byte> trailer)
    {
        byte subImpl = trailer[1];
        byte blockAndProbes = trailer[2];
        int log2BlockBytes = ((blockAndProbes >> 5) & 7) + 6;
        int numProbes = blockAndProbes & FilterTrailer.ProbesMask;
        if (numProbes < 1 || numProbes > 30)
        {
            return AlwaysTrueFilterReader.Instance;
        }
        if (BinaryPrimitives.ReadUInt16LittleEndian(trailer.Slice(3)) != 0)
        {
            return AlwaysTrueFilterReader.Instance; // reserved, possibly a future hash seed
        }
        if (subImpl != FilterTrailer.FastLocalBloomSubImpl
            || log2BlockBytes != 6
            || bits.Length < FastLocalBloomMath.CacheLineBytes)
        {
            return AlwaysTrueFilterReader.Instance;
        }
        return new FastLocalBloomBitsReader(bits, numProbes);
    }

    private static IFilterBitsReader CreateLegacyBloom(ReadOnlyMemory<byte> bits, int numProbes, ReadOnlySpan<byte> trailer)
    {
        uint len = (uint)bits.Length;
        uint numLines = BinaryPrimitives.ReadUInt32LittleEndian(trailer.Slice(1));
        if (numLines == 0 || len % numLines != 0)
        {
            return AlwaysTrueFilterReader.Instance;
        }
        int log2LineBytes = 0;
        while (((ulong)numLines << log2LineBytes) < len)
        {
            log2LineBytes++;
        }
        if (((ulong)numLines << log2LineBytes) != len || log2LineBytes > 30)
        {
            return AlwaysTrueFilterReader.Instance; // line size not a power of two
        }
        return new LegacyBloomBitsReader(bits, numProbes, numLines, log2LineBytes);
    }
}
