namespace KvEngine;

/// <summary>
/// Block compression for tables. The values are RocksDB's CompressionType codes, stored in every
/// block trailer (persisted: never renumber). Every codec is managed code (Snappier,
/// K4os.Compression.LZ4, ZstdSharp.Port): no native library is needed to read or write them.
/// </summary>
public enum KvCompressionType : byte
{
    /// <summary>Blocks are stored uncompressed (RocksDB's kNoCompression).</summary>
    None = 0x0,

    /// <summary>Snappy (RocksDB's kSnappyCompression, its default).</summary>
    Snappy = 0x1,

    /// <summary>LZ4 block format with the uncompressed size prefixed as a varint (RocksDB's kLZ4Compression).</summary>
    Lz4 = 0x4,

    /// <summary>LZ4 high compression: the same LZ4 block format, slower to write, smaller.</summary>
    Lz4HC = 0x5,
    /// <summary>Zstandard (RocksDB's kZSTD), with the uncompressed size prefixed as a varint.</summary>
    Zstd = 0x7,
}
