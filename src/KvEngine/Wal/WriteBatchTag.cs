namespace KvEngine.Wal;

/// <summary>
/// The tag byte opening each record of a WriteBatch: RocksDB's ValueType values as db/write_batch.cc
/// writes them into the WAL. Persisted in WAL files, shared with RocksDB: never renumber.
/// The plain tags share their values with <see cref="Format.ValueType"/>.
/// </summary>
internal enum WriteBatchTag : byte
{
    /// <summary>key: varstring.</summary>
    Deletion = 0x0,

    /// <summary>key: varstring, value: varstring.</summary>
    Value = 0x1,

    /// <summary>key: varstring, operand: varstring.</summary>
    Merge = 0x2,

    /// <summary>blob: varstring. Not a write: not counted, ignored on replay.</summary>
    LogData = 0x3,

    /// <summary>cf: varint32, key: varstring.</summary>
    ColumnFamilyDeletion = 0x4,

    /// <summary>cf: varint32, key: varstring, value: varstring.</summary>
    ColumnFamilyValue = 0x5,

    /// <summary>cf: varint32, key: varstring, operand: varstring.</summary>
    ColumnFamilyMerge = 0x6,

    /// <summary>key: varstring.</summary>
    SingleDeletion = 0x7,

    /// <summary>cf: varint32, key: varstring.</summary>
    ColumnFamilySingleDeletion = 0x8,

    /// <summary>Two-phase commit marker, no payload.</summary>
    BeginPrepareXid = 0x9,

    /// <summary>Two-phase commit marker, xid: varstring.</summary>
    EndPrepareXid = 0xA,

    /// <summary>Two-phase commit marker, xid: varstring.</summary>
    CommitXid = 0xB,

    /// <summary>Two-phase commit marker, xid: varstring.</summary>
    RollbackXid = 0xC,

    /// <summary>No payload; written by transaction DBs, ignored on replay.</summary>
    Noop = 0xD,

    /// <summary>cf: varint32, begin: varstring, end: varstring.</summary>
    ColumnFamilyRangeDeletion = 0xE,

    /// <summary>begin: varstring, end: varstring (deletes [begin, end)).</summary>
    RangeDeletion = 0xF,

    /// <summary>cf: varint32, key: varstring, blob index: varstring (integrated BlobDB).</summary>
    ColumnFamilyBlobIndex = 0x10,

    /// <summary>key: varstring, blob index: varstring (integrated BlobDB).</summary>
    BlobIndex = 0x11,

    /// <summary>Two-phase commit marker (WritePrepared), no payload.</summary>
    BeginPersistedPrepareXid = 0x12,

    /// <summary>Two-phase commit marker (WriteUnprepared), no payload.</summary>
    BeginUnprepareXid = 0x13,

    /// <summary>Two-phase commit marker, timestamp: varstring, xid: varstring.</summary>
    CommitXidAndTimestamp = 0x15,

    /// <summary>key: varstring, entity: varstring (wide columns).</summary>
    WideColumnEntity = 0x16,

    /// <summary>cf: varint32, key: varstring, entity: varstring (wide columns).</summary>
    ColumnFamilyWideColumnEntity = 0x17,
}
