namespace KvEngine.Table;

/// <summary>
/// Block checksum algorithm, RocksDB's ChecksumType: the first byte of the footer.
/// Persisted in table files shared with RocksDB: never renumber.
/// </summary>
internal enum ChecksumType : byte
{
    None = 0,
    Crc32C = 1,
    XxHash = 2,
    XxHash64 = 3,
    Xxh3 = 4,
}
