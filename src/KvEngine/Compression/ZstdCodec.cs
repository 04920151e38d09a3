using ZstdSharp;
using ZstdSharp.Unsafe;

namespace KvEngine.Compression;

/// <summary>
/// Zstandard frames (what RocksDB stores for kZSTD: one frame with its content size, no checksum)
/// through the managed ZstdSharp.Port; sources up to 32 KiB (data blocks) at the default level (3)
/// through our own match finder and ZstdSharp's sequence encoder (<see cref="ZstdSequenceCompressor"/>).
/// A ZSTD context holds hundreds of KiB of tables, so each
/// thread keeps one compression context (re-levelled when a caller asks for another level) and
/// one decompression context for its life, as RocksDB keeps per-thread contexts: a block then
/// costs no allocation. Every failure of the package on malformed input is turned into a -1
/// result, so no codec exception reaches a reader. Thread-safe (contexts are thread-local).
/// </summary>
internal static unsafe class ZstdCodec
{
    /// <summary>ZSTD_CONTENTSIZE_UNKNOWN.</summary>
    public const ulong ContentSizeUnknown = ulong.MaxValue;

    /// <summary>ZSTD_CONTENTSIZE_ERROR.</summary>
    public const ulong ContentSizeError = ulong.MaxValue - 1;

    /// <summary>ZSTD_CLEVEL_DEFAULT: the level RocksDB uses for ZSTD when asked for the default.</summary>
    public const int DefaultLevel = 3;

    [ThreadStatic]
    private static Compressor? t_compressor;

    [ThreadStatic]
    private static ZstdSequenceCompressor? t_defaultLevelCompressor;

    [ThreadStatic]
    private static int t_compressorLevel;

    [ThreadStatic]
    private static Decompressor? t_decompressor;

    /// <summary>ZSTD_compressBound.</summary>
    public static int CompressBound(int sourceLength) => Compressor.GetCompressBound(sourceLength);

    /// <summary>
    /// One frame at <paramref name="level"/> (ZSTD's scale, clamped to its range; 0 is its default).
    /// Returns the frame length, 0 when it did not fit.
    /// </summary>
    public static int Compress(ReadOnlySpan<byte> source, Span<byte> destination, int level)
    {
        level = Math.Clamp(level == 0 ? DefaultLevel : level, Compressor.MinCompressionLevel, Compressor.MaxCompressionLevel);
        if (level == DefaultLevel && source.Length <= ZstdSequenceCompressor.MaxSourceLength)
        {
            return (t_defaultLevelCompressor ??= new ZstdSequenceCompressor()).Compress(source, destination);
        }
        Compressor? compressor = t_compressor;
        if (compressor is null)
        {
            t_compressor = compressor = new Compressor(level);
            t_compressorLevel = level;
        }
        else if (t_compressorLevel != level)
        {
            compressor.SetParameter(ZSTD_cParameter.ZSTD_c_compressionLevel, level);
            t_compressorLevel = level;
        }
        try
        {
            return compressor.TryWrap(source, destination, out int written) ? written : 0;
        }
        catch (ZstdException)
        {
            return 0; // the block is then stored uncompressed
        }
    }

    /// <summary>ZSTD_getFrameContentSize: the size a frame header declares, or the sentinels above.</summary>
    public static ulong GetFrameContentSize(ReadOnlySpan<byte> source)
    {
        fixed (byte* src = source)
        {
            return Methods.ZSTD_getFrameContentSize(src, (nuint)source.Length);
        }
    }

    /// <summary>Decompresses one frame into <paramref name="destination"/>; the length, or -1 when malformed.</summary>
    public static int Decompress(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        Decompressor decompressor = t_decompressor ??= new Decompressor();
        try
        {
            return decompressor.TryUnwrap(source, destination, out int written) ? written : -1;
        }
#pragma warning disable CA1031 // any failure of the decoder on stored bytes is corruption, reported by the caller
        catch (Exception)
#pragma warning restore CA1031
        {
            return -1;
        }
    }
}
