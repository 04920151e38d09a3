namespace KvEngine;

/// <summary>
/// Block checksum for tables. The values are RocksDB's ChecksumType codes, stored in each table's
/// footer (persisted: never renumber). RocksDB 7.8 writes XXH3 by default.
/// </summary>
public enum KvChecksumType : byte
{
    Crc32C = 0x1,
    XxHash3 = 0x4,
}
