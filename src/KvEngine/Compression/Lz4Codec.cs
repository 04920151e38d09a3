using K4os.Compression.LZ4;
using K4os.Compression.LZ4.Engine;

namespace KvEngine.Compression;

/// <summary>
/// The LZ4 block format (raw blocks, no frame: what RocksDB stores for kLZ4Compression and
/// kLZ4HCCompression) through the managed K4os.Compression.LZ4. At LZ4's default acceleration (1)
/// and for LZ4HC the package's one-shot encoder keeps its state in native memory it frees on
/// return, as liblz4's LZ4_compress_default and LZ4_compress_HC do: no managed allocation. Other
/// accelerations (RocksDB's negative levels) go through a fresh <see cref="Pubternal.FastContext"/>
/// per block: that context is a streaming one (a second block would reference the first as a
/// dictionary), so it must never be reused across blocks. Decoding is the bounds-checked "safe"
/// decoder: malformed input gives a negative result, never a read or write outside the spans.
/// Stateless and thread-safe.
/// </summary>
internal static unsafe class Lz4Codec
{
    /// <summary>liblz4's LZ4HC_CLEVEL_DEFAULT: what RocksDB's level 0 (its default) means for LZ4HC.</summary>
    public const int DefaultHCLevel = 9;

    /// <summary>LZ4_compressBound: the largest output of a block of <paramref name="sourceLength"/> bytes.</summary>
    public static int CompressBound(int sourceLength) => LZ4Codec.MaximumOutputSize(sourceLength);

    /// <summary>
    /// LZ4_compress_fast with <paramref name="acceleration"/> (1 is LZ4's default; RocksDB passes
    /// the negated level for negative levels). Returns the compressed length, 0 when it did not fit.
    /// </summary>
    public static int Compress(ReadOnlySpan<byte> source, Span<byte> destination, int acceleration)
    {
        int n;
        if (acceleration <= 1)
        {
            n = LZ4Codec.Encode(source, destination, LZ4Level.L00_FAST);
        }
        else
        {
            using var context = new Pubternal.FastContext();
            fixed (byte* src = source)
            fixed (byte* dst = destination)
            {
                n = Pubternal.CompressFast(context, src, dst, source.Length, destination.Length, acceleration);
            }
        }
        return n > 0 ? n : 0;
    }

    /// <summary>
    /// LZ4HC at <paramref name="level"/> (liblz4's scale: below 1 is the default 9; 1-2 are taken as
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
