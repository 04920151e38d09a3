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
/// The codecs are managed packages (Snappier, K4os.Compression.LZ4, ZstdSharp.Port) and the BCL's
/// deflate for Zlib: nothing here loads a native library, and the bytes are exactly what RocksDB's
/// native codecs read and write. Thread-safe (codec contexts are per thread).
/// </summary>
internal static class BlockCompression
{
    /// <summary>RocksDB's CompressionOptions::kDefaultCompressionLevel: "the codec's default".</summary>
    public const int DefaultLevel = 32767;

    /// <summary>Throws <see cref="KvException"/> when <paramref name="type"/> cannot be written here.</summary>
    public static void EnsureWritable(CompressionType type)
    {
        if (!IsWritable(type))
        {
            throw new KvNotSupportedException(
                $"Compression {CompressionTypeNames.ToRocksDbName(type)} is not supported for writing; use None, Snappy, LZ4, LZ4HC or ZSTD.");
        }
    }

    /// <summary>True for the codecs this engine writes: None, Snappy, LZ4, LZ4HC and ZSTD.</summary>
    public static bool IsWritable(CompressionType type) =>
        type is CompressionType.None or CompressionType.Snappy or CompressionType.Lz4 or CompressionType.Lz4HC or CompressionType.Zstd;

    /// <summary>
    /// Appends the compressed form of <paramref name="raw"/> to <paramref name="output"/> and returns
    /// true; returns false, leaving <paramref name="output"/> as it was, when compression would not
    /// save an eighth of the block (or the codec declined). <paramref name="level"/> is RocksDB's
    /// compression_opts.level: <see cref="DefaultLevel"/> for the codec's default; for LZ4 a
    /// negative level is the acceleration (RocksDB passes -level to LZ4_compress_fast); for LZ4HC
    /// and ZSTD the codec's own level.
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
        EnsureWritable(type);
        int header = Coding.VarintLength((ulong)raw.Length);
        long bound = type == CompressionType.Zstd ? ZstdCodec.CompressBound(raw.Length) : Lz4Codec.CompressBound(raw.Length);
        if (bound <= 0 || bound + header > Array.MaxLength)
        {
            return false;
        }
        Span<byte> dst = output.GetSpan(header + (int)bound);
        Coding.EncodeVarint32(dst, (uint)raw.Length);
        Span<byte> body = dst.Slice(header, (int)bound);
        int written = type switch
        {
            CompressionType.Lz4 => Lz4Codec.Compress(raw, body, level < 0 && level != int.MinValue ? -level : 1),
            CompressionType.Lz4HC => Lz4Codec.CompressHC(raw, body, level == DefaultLevel ? 0 : level),
            _ => ZstdCodec.Compress(raw, body, level == DefaultLevel ? ZstdCodec.DefaultLevel : level),
        };
        long total = header + (long)written;
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
        int written = SnappyCodec.Compress(raw, output.GetSpan((int)bound)[..(int)bound]);
        if (written <= 0 || written >= raw.Length - (raw.Length / 8))
        {
            return false;
        }
        output.Advance(written);
        return true;
    }

    /// <summary>
    /// Reads the uncompressed size prefix of a compressed block (for Snappy, the size header that
    /// is part of the codec output, so <paramref name="headerLength"/> is 0). Throws
    /// <see cref="KvCorruptionException"/> naming the file and block offset when it is malformed or above <paramref name="maxLength"/>,
    /// and <see cref="KvException"/> for a codec this engine cannot read.
    /// </summary>
    public static int ReadUncompressedLength(
        CompressionType type, ReadOnlySpan<byte> block, int maxLength, string file, ulong blockOffset, out int headerLength)
    {
        EnsureReadable(type, file, blockOffset);
        if (!Coding.TryDecodeVarint32(block, out uint length, out headerLength))
        {
            throw new KvCorruptionException($"{Where(file, blockOffset)}: {Name(type)} block has a malformed size prefix.");
        }
        if (length > (uint)maxLength)
        {
            throw new KvCorruptionException(
                $"{Where(file, blockOffset)}: {Name(type)} block declares {length} uncompressed bytes, above the limit of {maxLength}.");
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
    public static void Decompress(CompressionType type, ReadOnlySpan<byte> codecOutput, Span<byte> destination, string file, ulong blockOffset)
    {
        switch (type)
        {
            case CompressionType.Lz4:
            case CompressionType.Lz4HC:
                int n = Lz4Codec.Decompress(codecOutput, destination);
                if (n < 0)
                {
                    throw new KvCorruptionException($"{Where(file, blockOffset)}: {Name(type)} block is malformed (LZ4 error {n}).");
                }
                CheckLength(type, n, destination.Length, file, blockOffset);
                return;
            case CompressionType.Zstd:
                ulong declared = ZstdCodec.GetFrameContentSize(codecOutput);
                if (declared == ZstdCodec.ContentSizeError)
                {
                    throw new KvCorruptionException($"{Where(file, blockOffset)}: ZSTD block does not start with a valid frame.");
                }
                if (declared != ZstdCodec.ContentSizeUnknown && declared != (ulong)destination.Length)
                {
                    throw new KvCorruptionException(
                        $"{Where(file, blockOffset)}: ZSTD frame declares {declared} bytes but the block header says {destination.Length}.");
                }
                CheckDecoded(type, ZstdCodec.Decompress(codecOutput, destination), destination.Length, file, blockOffset);
                return;
            case CompressionType.Snappy:
                CheckDecoded(type, SnappyCodec.Decompress(codecOutput, destination), destination.Length, file, blockOffset);
                return;
            case CompressionType.Zlib:
                CheckDecoded(type, ZlibCodec.Decompress(codecOutput, destination), destination.Length, file, blockOffset);
                return;
            default:
                EnsureReadable(type, file, blockOffset);
                throw new KvCorruptionException($"{Where(file, blockOffset)}: block compression {Name(type)} has no decoder.");
        }
    }

    private static void EnsureReadable(CompressionType type, string file, ulong blockOffset)
    {
        switch (type)
        {
            case CompressionType.Snappy:
            case CompressionType.Zlib:
            case CompressionType.Lz4:
            case CompressionType.Lz4HC:
            case CompressionType.Zstd:
                return;
            case CompressionType.BZip2:
            case CompressionType.Xpress:
                // Corruption, as RocksDB reports a codec it was built without ("BZip2 not supported
                // or corrupted BZip2 compressed block contents"): without checksums a flipped
                // compression byte looks exactly like this.
                throw new KvCorruptionException(
                    $"{Where(file, blockOffset)}: block uses {Name(type)} compression, which this engine cannot read (Snappy, Zlib, LZ4, LZ4HC and ZSTD only), or the block is corrupt.");
            default:
                throw new KvCorruptionException($"{Where(file, blockOffset)}: unknown block compression type 0x{(byte)type:x2}.");
        }
    }

    private static void CheckDecoded(CompressionType type, long produced, int expected, string file, ulong blockOffset)
    {
        if (produced < 0)
        {
            throw new KvCorruptionException($"{Where(file, blockOffset)}: {Name(type)} block is malformed.");
        }
        CheckLength(type, produced, expected, file, blockOffset);
    }

    private static void CheckLength(CompressionType type, long actual, int expected, string file, ulong blockOffset)
    {
        if (actual != expected)
        {
            throw new KvCorruptionException(
                $"{Where(file, blockOffset)}: {Name(type)} block decompressed to {actual} bytes, expected {expected}.");
        }
    }

    private static string Where(string file, ulong blockOffset) => $"{file}: block at offset {blockOffset}";

    private static string Name(CompressionType type) => CompressionTypeNames.ToRocksDbName(type);
}
