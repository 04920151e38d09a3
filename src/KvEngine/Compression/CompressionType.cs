namespace KvEngine.Compression;

/// <summary>
/// Block compression codec: the type byte of every block trailer, RocksDB's CompressionType.
/// Persisted in table files shared with RocksDB: never renumber.
/// </summary>
internal enum CompressionType : byte
{
    None = 0x0,
    Snappy = 0x1,
    Zlib = 0x2,
    BZip2 = 0x3,
    Lz4 = 0x4,
    Lz4HC = 0x5,
    Xpress = 0x6,
    Zstd = 0x7,
}
