namespace KvEngine.Versions;

/// <summary>
/// A blob file added to the database (integrated BlobDB; RocksDB db/blob/blob_file_addition.h).
/// Decoded so that MANIFESTs of databases that once used blob files can be read. Immutable.
/// </summary>
internal sealed record BlobFileAddition(
    ulong BlobFileNumber,
    ulong TotalBlobCount,
    ulong TotalBlobBytes,
    string ChecksumMethod,
    byte[] ChecksumValue);
