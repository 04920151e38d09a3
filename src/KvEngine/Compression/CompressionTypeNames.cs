namespace KvEngine.Compression;

/// <summary>
/// RocksDB's names for <see cref="CompressionType"/> values (CompressionTypeToString), as written
/// in the "rocksdb.compression" table property. Stateless and thread-safe.
/// </summary>
internal static class CompressionTypeNames
{
    public static string ToRocksDbName(CompressionType type) => type switch
    {
        CompressionType.None => "NoCompression",
        CompressionType.Snappy => "Snappy",
        CompressionType.Zlib => "Zlib",
        CompressionType.BZip2 => "BZip2",
        CompressionType.Lz4 => "LZ4",
        CompressionType.Lz4HC => "LZ4HC",
        CompressionType.Xpress => "Xpress",
        CompressionType.Zstd => "ZSTD",
        _ => "Unknown(" + ((byte)type).ToString(System.Globalization.CultureInfo.InvariantCulture) + ")",
    };

    /// <summary>True for the codecs this engine can both write and read.</summary>
    public static bool IsSupported(CompressionType type) =>
        type is CompressionType.None or CompressionType.Snappy or CompressionType.Lz4 or CompressionType.Lz4HC or CompressionType.Zstd;
}
