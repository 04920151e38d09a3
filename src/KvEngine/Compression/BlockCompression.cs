using KvEngine.Util;

namespace KvEngine.Compression;

/// <summary>
/// RocksDB's compressed block payload for format_version &gt;= 2:
/// <code>
/// CompressedBlock := uncompressed_size: varint32  codec_output: byte[]   (LZ4, LZ4HC, ZSTD, Zlib)
///                  | snappy_output: byte[]   (Snappy: its own varint32 header is the size)
///   codec_output  := LZ4 block (Lz4, Lz4HC) | ZSTD frame (Zstd) | raw deflate (Zlib, read only)
/// </code>
/// A block is stored compressed only when that saves at least an eighth
/// (compressed size including the size prefix &lt; raw - raw / 8, RocksDB's GoodCompressionRatio);
/// otherwise it is stored raw with type <see cref="CompressionType.None"/>.
/// Stateless and thread-safe.
/// </summary>
internal static class BlockCompression
{
    /// <summary>RocksDB's CompressionOptions::kDefaultCompressionLevel: "the codec's default".</summary>
    public const int DefaultLevel = 32767;

    /// <summary>The level RocksDB uses for ZSTD when asked for the default (ZSTD_CLEVEL_DEFAULT).</summary>
    public const int DefaultZstdLevel = 3;

    /// <summary>Throws <see cref="KvException"/> when <paramref name="type"/> cannot be written here.</summary>
    public static void EnsureWritable(CompressionType type)
    {
        if (type != CompressionType.None && !TryEnsureNativeCodec(type))
        {
            throw new KvException(
                $"Compression {CompressionTypeNames.ToRocksDbName(type)} is not supported for writing; use None, Snappy, LZ4, LZ4HC or ZSTD.");
        }
    }

    /// <summary>
    /// Appends the compressed form of <paramref name="raw"/> to <paramref name="output"/> and returns
    /// true; returns false, leaving <paramref name="output"/> as it was, when compression would not
    /// save an eighth of the block (or the codec declined).
    /// </summary>
    public static bool TryCompress(CompressionType type, int level, ReadOnlySpan<byte> raw, ByteBuffer output)
    {
        if (type == CompressionType.None || raw.Length == 0)
        {
            return false;
        }
        if (type == CompressionType.Snappy)
        {
            return TryCompressSnappy(raw, output);
        }
        int header = Coding.VarintLength((ulong)raw.Length);
        long bound = type == CompressionType.Zstd
            ? (long)ZstdCodec.CompressBound((nuint)raw.Length)
            : Lz4Codec.CompressBound(raw.Length);
        if (bound <= 0 || bound + header > Array.MaxLength)
        {
            return false;
        }
        Span<byte> dst = output.GetSpan(header + (int)bound);
        Coding.EncodeVarint32(dst, (uint)raw.Length);
        Span<byte> body = dst.Slice(header, (int)bound);
        long written;
        switch (type)
        {
            case CompressionType.Lz4:
                written = Lz4Codec.Compress(raw, body, level < 0 && level != int.MinValue ? -level : 1);
                break;
            case CompressionType.Lz4HC:
                written = Lz4Codec.CompressHC(raw, body, level == DefaultLevel ? 0 : level);
                break;
            case CompressionType.Zstd:
                nuint r = ZstdCodec.Compress(raw, body, level == DefaultLevel ? DefaultZstdLevel : level);
                written = ZstdCodec.IsError(r) ? 0 : (long)r;
                break;
            default:
                EnsureWritable(type);
                return false;
        }
        long total = header + written;
        if (written <= 0 || total >= raw.Length - (raw.Length / 8))
        {
            return false;
        }
        output.Advance((int)total);
        return true;
    }

    private static bool TryCompressSnappy(ReadOnlySpan<byte> raw, ByteBuffer output)
    {
        long bound = SnappyCodec.MaxCompressedLength(raw.Length);
        if (bound <= 0 || bound > Array.MaxLength)
        {
            return false;
        }
        long written = SnappyCodec.Compress(raw, output.GetSpan((int)bound)[..(int)bound]);
        if (written <= 0 || written >= raw.Length - (raw.Length / 8))
        {
            return false;
        }
        output.Advance((int)written);
        return true;
    }

    /// <summary>
    /// Reads the uncompressed size prefix of a compressed block (for Snappy, the size header that
    /// is part of the codec output, so <paramref name="headerLength"/> is 0). Throws
    /// <see cref="KvCorruptionException"/> when it is malformed or above <paramref name="maxLength"/>,
    /// and <see cref="KvException"/> for a codec this engine cannot read.
    /// </summary>
    public static int ReadUncompressedLength(
        CompressionType type, ReadOnlySpan<byte> block, int maxLength, string source, out int headerLength)
    {
        EnsureReadable(type, source);
        if (!Coding.TryDecodeVarint32(block, out uint length, out headerLength))
        {
            throw new KvCorruptionException($"{source}: {Name(type)} block has a malformed size prefix.");
        }
        if (length > (uint)maxLength)
        {
            throw new KvCorruptionException(
                $"{source}: {Name(type)} block declares {length} uncompressed bytes, above the limit of {maxLength}.");
        }
        if (type == CompressionType.Snappy)
        {
            headerLength = 0;
        }
        return (int)length;
    }

    /// <summary>
    /// Decompresses a block's codec output (after the size prefix) into exactly
    /// <paramref name="destination"/>. Throws <see cref="KvCorruptionException"/> on any codec error
    /// or size mismatch.
    /// </summary>
    public static void Decompress(CompressionType type, ReadOnlySpan<byte> codecOutput, Span<byte> destination, string source)
    {
        switch (type)
        {
            case CompressionType.Lz4:
            case CompressionType.Lz4HC:
                int n = Lz4Codec.Decompress(codecOutput, destination);
                if (n < 0)
                {
                    throw new KvCorruptionException($"{source}: {Name(type)} block is malformed (LZ4 error {n}).");
                }
                CheckLength(type, n, destination.Length, source);
                return;
            case CompressionType.Zstd:
                ulong declared = ZstdCodec.GetFrameContentSize(codecOutput);
                if (declared == ZstdCodec.ContentSizeError)
                {
                    throw new KvCorruptionException($"{source}: ZSTD block does not start with a valid frame.");
                }
                if (declared != ZstdCodec.ContentSizeUnknown && declared != (ulong)destination.Length)
                {
                    throw new KvCorruptionException(
                        $"{source}: ZSTD frame declares {declared} bytes but the block header says {destination.Length}.");
                }
                nuint r = ZstdCodec.Decompress(codecOutput, destination);
                if (ZstdCodec.IsError(r))
                {
                    throw new KvCorruptionException($"{source}: ZSTD block is malformed ({ZstdCodec.GetErrorName(r)}).");
                }
                CheckLength(type, (long)r, destination.Length, source);
                return;
            case CompressionType.Snappy:
                CheckDecoded(type, SnappyCodec.Decompress(codecOutput, destination), destination.Length, source);
                return;
            case CompressionType.Zlib:
                CheckDecoded(type, ZlibCodec.Decompress(codecOutput, destination), destination.Length, source);
                return;
            default:
                EnsureReadable(type, source);
                throw new KvCorruptionException($"{source}: block compression {Name(type)} has no decoder.");
        }
    }

    /// <summary>
    /// Loads the native library of a codec we both write and read (throwing <see cref="KvException"/>
    /// naming the package when it is missing); false for any other type.
    /// </summary>
    private static bool TryEnsureNativeCodec(CompressionType type)
    {
        switch (type)
        {
            case CompressionType.Lz4:
            case CompressionType.Lz4HC:
                Lz4Codec.EnsureAvailable();
                return true;
            case CompressionType.Zstd:
                ZstdCodec.EnsureAvailable();
                return true;
            case CompressionType.Snappy:
                SnappyCodec.EnsureAvailable();
                return true;
            default:
                return false;
        }
    }

    private static void EnsureReadable(CompressionType type, string source)
    {
        if (TryEnsureNativeCodec(type))
        {
            return;
        }
        switch (type)
        {
            case CompressionType.Zlib:
                return;
            case CompressionType.BZip2:
            case CompressionType.Xpress:
                throw new KvException(
                    $"{source}: block uses {Name(type)} compression, which this engine cannot read (Snappy, Zlib, LZ4, LZ4HC and ZSTD only).");
            default:
                throw new KvCorruptionException($"{source}: unknown block compression type 0x{(byte)type:x2}.");
        }
    }

    private static void CheckDecoded(CompressionType type, long produced, int expected, string source)
    {
        if (produced < 0)
        {
            throw new KvCorruptionException($"{source}: {Name(type)} block is malformed.");
        }
        CheckLength(type, produced, expected, source);
    }

    private static void CheckLength(CompressionType type, long actual, int expected, string source)
    {
        if (actual != expected)
        {
            throw new KvCorruptionException(
                $"{source}: {Name(type)} block decompressed to {actual} bytes, expected {expected}.");
        }
    }

    private static string Name(CompressionType type) => CompressionTypeNames.ToRocksDbName(type);
}
