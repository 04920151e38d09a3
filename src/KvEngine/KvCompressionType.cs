namespace KvEngine;

/// <summary>
/// Block compression for tables. The values are RocksDB's CompressionType codes, stored in every
/// block trailer (persisted: never renumber).
/// </summary>
public enum KvCompressionType : byte
{
    None = 0x0,
    Snappy = 0x1,
    Lz4 = 0x4,
    Zstd = 0x7,
}
