namespace KvEngine.Wal;

/// <summary>
/// Receives the writes of a WriteBatch in order (RocksDB's WriteBatch::Handler). Implemented by structs and passed by reference, so iteration neither boxes nor
/// allocates. Spans are valid only during the call.
/// </summary>
internal interface IWriteBatchHandler
{
    /// <summary>
    /// The following writes are for <paramref name="columnFamily"/> (called before the first write
    /// and whenever the family changes). False passes its writes over (a dropped family, or one the
    /// handler does not serve): each is reported with <see cref="SkipDroppedRecord"/>.
    /// </summary>
    bool SeekColumnFamily(uint columnFamily);

    void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value);

    void Delete(ReadOnlySpan<byte> key);

    void SingleDelete(ReadOnlySpan<byte> key);

    /// <summary>Deletes user keys in [<paramref name="begin"/>, <paramref name="end"/>).</summary>
    void DeleteRange(ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end);

    void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value);

    /// <summary>
    /// A record of a column family the handler refused was passed over. It still takes a sequence
    /// number, as in RocksDB's recovery.
    /// </summary>
    void SkipDroppedRecord()
    {
    }
}
