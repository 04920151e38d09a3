namespace KvEngine.Wal;

/// <summary>
/// Receives every piece of a log that <see cref="LogReader"/> drops (RocksDB's
/// log::Reader::Reporter). Called on the reading thread, before the reader applies the recovery
/// mode's verdict (continue, stop, or throw).
/// </summary>
internal interface ILogReporter
{
    /// <param name="bytesDropped">How many bytes of the file were skipped.</param>
    /// <param name="reason">RocksDB's wording, e.g. "checksum mismatch", "truncated record body".</param>
    /// <param name="fileOffset">File offset of the damaged physical or logical record.</param>
    void Corruption(long bytesDropped, string reason, long fileOffset);
}
