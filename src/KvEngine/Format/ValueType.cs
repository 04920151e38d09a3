namespace KvEngine.Format;

/// <summary>
/// The type byte in the low 8 bits of an internal key's trailer, and the record tag in a WriteBatch.
/// Persisted in WAL, table and MANIFEST bytes, shared with RocksDB: never renumber.
/// </summary>
internal enum ValueType : byte
{
    Deletion = 0x0,
    Value = 0x1,
    Merge = 0x2,
    SingleDeletion = 0x7,
    RangeDeletion = 0xF,

    /// <summary>
    /// Not stored: the type used in seek keys. Internal keys order by type descending after
    /// sequence, so a seek key with this type and sequence S sorts before every stored entry of the
    /// same user key with sequence &lt;= S.
    /// </summary>
    ValueTypeForSeek = 0x18,
}
