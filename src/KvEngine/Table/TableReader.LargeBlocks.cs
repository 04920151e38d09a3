using KvEngine.Cache;
using KvEngine.Compression;
using KvEngine.Memory;

namespace KvEngine.Table;

/// <summary>Large blocks of <see cref="TableReader"/>: an uncompressed one (a large value's own block) read without scratch memory.</summary>
internal sealed partial class TableReader
{
    /// <summary>Smallest block read by <see cref="TryReadUncompressedInPlace"/> (two reads, no scratch copy).</summary>
    internal const int DirectReadMinBytes = 1 << 20;

    /// <summary>
    /// A large uncompressed block (a value of a block of its own) read straight into the block's
    /// own buffer, its trailer read apart: through scratch memory it would be resident twice while
    /// copied. Null when the trailer says the block is compressed (the caller reads it as usual).
    /// </summary>
    private Block? TryReadUncompressedInPlace(BlockHandle handle, bool verifyChecksum, CacheEntryRole role, string kind)
    {
        CheckBlockBounds(handle, kind);
        int size = (int)handle.Size;
        Span<byte> trailer = stackalloc byte[TableFormat.BlockTrailerSize];
        if (ReadFile((long)handle.Offset + size, trailer) != trailer.Length)
        {
            throw new KvCorruptionException($"{FileName}: truncated while reading {kind} block {handle}.");
        }
        if ((CompressionType)trailer[0] != CompressionType.None)
        {
            return null;
        }
        RecordBlockRead(size + TableFormat.BlockTrailerSize);
        NativeBuffer output = _options.BlockAllocator.Allocate(size, use: NativeUse.TableBlock);
        try
        {
            if (ReadFile((long)handle.Offset, output.Span) != size)
            {
                throw new KvCorruptionException($"{FileName}: truncated while reading {kind} block {handle}.");
            }
            if (verifyChecksum)
            {
                VerifyBlockChecksum(output.Span, trailer, handle, kind);
            }
        }
        catch
        {
            output.Dispose();
            throw;
        }
        return Block.RentNative(output, role, FileName, kind, handle.Offset);
    }
}
