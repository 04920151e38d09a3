namespace KvEngine.Versions;

/// <summary>
/// Field tags of a VersionEdit (RocksDB 7.8 db/version_edit.h, enum Tag), each a varint32 in the
/// MANIFEST. Persisted, shared with RocksDB: never renumber. A reader may skip an unknown tag that
/// has <see cref="SafeIgnoreMask"/> set (its value is length-prefixed); any other unknown tag is
/// corruption.
/// </summary>
internal enum VersionEditTag : uint
{
    Comparator = 1,
    LogNumber = 2,
    NextFileNumber = 3,
    LastSequence = 4,
    CompactCursor = 5,
    DeletedFile = 6,

    /// <summary>LevelDB's file record: level, number, size, smallest, largest. Read only.</summary>
    NewFile = 7,

    PrevLogNumber = 9,
    MinLogNumberToKeep = 10,

    /// <summary>NewFile plus smallest and largest sequence numbers. Read only.</summary>
    NewFile2 = 100,

    /// <summary>NewFile2 plus a path id after the number. Read only.</summary>
    NewFile3 = 102,

    /// <summary>The current file record, with tagged custom fields.</summary>
    NewFile4 = 103,

    ColumnFamily = 200,
    ColumnFamilyAdd = 201,
    ColumnFamilyDrop = 202,
    MaxColumnFamily = 203,
    InAtomicGroup = 300,
    BlobFileAddition = 400,
    BlobFileGarbage = 401,

    /// <summary>Bit marking tags that readers which do not know them may skip.</summary>
    SafeIgnoreMask = 1 << 13,

    DbId = SafeIgnoreMask + 1,
    BlobFileAdditionDeprecated = SafeIgnoreMask + 2,
    BlobFileGarbageDeprecated = SafeIgnoreMask + 3,
    WalAddition = SafeIgnoreMask + 4,
    WalDeletion = SafeIgnoreMask + 5,
    FullHistoryTsLow = SafeIgnoreMask + 6,
    WalAddition2 = SafeIgnoreMask + 7,
    WalDeletion2 = SafeIgnoreMask + 8,

    /// <summary>
    /// KvEngine's own: WALs created (varstring of varint64 numbers), written so a lost edit can be
    /// noticed at open (see WalTracker). Safe to ignore, so RocksDB skips it; far above
    /// RocksDB's own safe-to-ignore tags so that its future ones do not collide. RocksDB's
    /// WalAddition2 is not used for this: 7.8 crashes opening read-only (ldb) a database whose
    /// MANIFEST tracks WALs unless track_and_verify_wals_in_manifest is set.
    /// </summary>
    KvEngineWalsCreated = SafeIgnoreMask + 4096 + 1,
}
