namespace KvEngine.Wal;

/// <summary>
/// Receives the writes of a WriteBatch in order (RocksDB's WriteBatch::Handler for the default
/// column family). Implemented by structs and passed by reference, so iteration neither boxes nor
/// allocates. Spans are valid only during the call.
/// </summary>
internal interface IWriteBatchHandler
{
    void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value);

    void Delete(ReadOnlySpan<byte> key);

    void SingleDelete(ReadOnlySpan<byte> key);

    /// <summary>Deletes user keys in [<paramref name="begin"/>, <paramref name="end"/>).</summary>
    void DeleteRange(ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end);

    void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value);

    /// <summary>
    /// A record of a dropped column family was passed over. It still takes a sequence number, as
    /// in RocksDB's recovery. Called only when the decoder is given dropped families.
    /// </summary>
    void SkipDroppedRecord()
    {
    }
}
