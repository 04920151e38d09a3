using K4os.Compression.LZ4;

namespace KvEngine.Compression;

/// <summary>
/// The LZ4 block format (raw blocks, no frame: what RocksDB stores for kLZ4Compression and
/// kLZ4HCCompression). Fast compression is our <see cref="Lz4BlockEncoder"/> (3-4x faster than
/// K4os's here, allocation-free); LZ4HC compression and all decoding are the managed
/// K4os.Compression.LZ4. HC lets the package keep its state in native memory it frees on return,
/// as the reference LZ4 library's LZ4_compress_HC does. Decoding is the bounds-checked "safe" decoder: malformed
/// input gives a negative result, never a read or write outside the spans. Stateless and
/// thread-safe (the encoder's table is thread-local).
/// </summary>
internal static class Lz4Codec
{
    /// <summary>the reference LZ4 library's LZ4HC_CLEVEL_DEFAULT: what RocksDB's level 0 (its default) means for LZ4HC.</summary>
    public const int DefaultHCLevel = 9;

    /// <summary>LZ4_compressBound: the largest output of a block of <paramref name="sourceLength"/> bytes.</summary>
    public static int CompressBound(int sourceLength) => LZ4Codec.MaximumOutputSize(sourceLength);

    /// <summary>
    /// LZ4_compress_fast with <paramref name="acceleration"/> (1 is LZ4's default; RocksDB passes
    /// the negated level for negative levels). Returns the compressed length, 0 when it did not fit.
    /// </summary>
    public static int Compress(ReadOnlySpan<byte> source, Span<byte> destination, int acceleration) =>
        Lz4BlockEncoder.Compress(source, destination, acceleration);

    /// <summary>
    /// LZ4HC at <paramref name="level"/> (the reference LZ4 library's scale: below 1 is the default 9; 1-2 are taken as
    /// 3, K4os's lowest HC level; above 12 as 12). Returns the compressed length, 0 when it did not fit.
    /// </summary>
    public static int CompressHC(ReadOnlySpan<byte> source, Span<byte> destination, int level)
    {
        int n = LZ4Codec.Encode(source, destination, ToHCLevel(level));
        return n > 0 ? n : 0;
    }

    /// <summary>LZ4_decompress_safe: the decompressed length, negative on malformed input.</summary>
    public static int Decompress(ReadOnlySpan<byte> source, Span<byte> destination) =>
        source.IsEmpty ? -1 : LZ4Codec.Decode(source, destination);

    internal static LZ4Level ToHCLevel(int level)
    {
        if (level < 1)
        {
            level = DefaultHCLevel;
        }
        return (LZ4Level)Math.Clamp(level, (int)LZ4Level.L03_HC, (int)LZ4Level.L12_MAX);
    }
}
