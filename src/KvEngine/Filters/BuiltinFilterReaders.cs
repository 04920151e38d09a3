using System.Buffers.Binary;
using KvEngine.Memory;

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

    /// <summary>
    /// Like <see cref="Create"/>, but copies the filter so <paramref name="filterBlock"/> may be reused:
    /// a FastLocalBloom block's whole lines go to native memory from <paramref name="allocator"/>
    /// (a pooled <see cref="FastLocalBloomNativeReader"/>, which the caller disposes once); other formats to a managed copy.
    /// </summary>
    public static IFilterBitsReader Load(ReadOnlySpan<byte> filterBlock, NativeAllocator allocator)
    {
        ArgumentNullException.ThrowIfNull(allocator);
        int len = filterBlock.Length - FastLocalBloomMath.MetadataLength;
        if (len > 0 && filterBlock[len] == FilterTrailer.NewBloomMarker
            && TryParseFastLocalBloom(filterBlock.Slice(len), len, out int numProbes))
        {
            int lines = len / FastLocalBloomMath.CacheLineBytes;
            NativeBuffer bits = allocator.Allocate(lines * FastLocalBloomMath.CacheLineBytes, use: NativeUse.Filter);
            try
            {
                filterBlock.Slice(0, bits.Length).CopyTo(bits.Span);
                return FastLocalBloomNativeReader.Rent(bits, numProbes);
            }
            catch
            {
                bits.Dispose();
                throw;
            }
        }
        return Create(filterBlock.ToArray());
    }

    private static IFilterBitsReader CreateNewBloom(ReadOnlyMemory<byte> bits, ReadOnlySpan<byte> trailer) =>
        TryParseFastLocalBloom(trailer, bits.Length, out int numProbes)
            ? new FastLocalBloomBitsReader(bits, numProbes)
            : AlwaysTrueFilterReader.Instance;

    /// <summary>True when a new-Bloom trailer (marker 0xFF) describes a FastLocalBloom filter this code can read.</summary>
    private static bool TryParseFastLocalBloom(ReadOnlySpan<byte> trailer, int bitsLength, out int numProbes)
    {
        byte subImpl = trailer[1];
        byte blockAndProbes = trailer[2];
        int log2BlockBytes = ((blockAndProbes >> 5) & 7) + 6;
        numProbes = blockAndProbes & FilterTrailer.ProbesMask;
        return numProbes is >= 1 and <= 30
            && BinaryPrimitives.ReadUInt16LittleEndian(trailer.Slice(3)) == 0 // reserved, possibly a future hash seed
            && subImpl == FilterTrailer.FastLocalBloomSubImpl
            && log2BlockBytes == 6
            && bitsLength >= FastLocalBloomMath.CacheLineBytes;
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
