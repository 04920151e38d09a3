namespace KvEngine;

/// <summary>
/// Block checksum for tables. The values are RocksDB's ChecksumType codes, stored in each table's
/// footer (persisted: never renumber). RocksDB 7.8 writes XXH3 by default.
/// </summary>
public enum KvChecksumType : byte
{
    /// <summary>CRC32C of the block and its compression type byte, masked as in LevelDB (RocksDB's kCRC32c, code 1).</summary>
    Crc32C = 0x1,

    /// <summary>XXH3-64 of the block, its low 32 bits mixed with the compression type byte (RocksDB's kXXH3, code 4; 7.8's default).</summary>
    XxHash3 = 0x4,
}
