namespace KvEngine.Versions;

/// <summary>
/// Tags of the custom fields closing a NewFile4 record (RocksDB db/version_edit.h, enum
/// NewFileCustomTag). Persisted, shared with RocksDB: never renumber. Each field but
/// <see cref="Terminate"/> is followed by a length-prefixed value; a reader skips an unknown field
/// unless its tag has <see cref="NonSafeIgnoreMask"/> set, which makes it corruption.
/// </summary>
internal enum NewFileCustomTag : uint
{
    /// <summary>Ends the custom fields; has no value.</summary>
    Terminate = 1,

    /// <summary>1 byte, 1 = marked for compaction.</summary>
    NeedCompaction = 2,

    /// <summary>fixed64: the edit's min log number to keep, for readers predating tag 10.</summary>
    MinLogNumberToKeepHack = 3,

    /// <summary>varint64.</summary>
    OldestBlobFileNumber = 4,

    /// <summary>varint64, seconds since the epoch.</summary>
    OldestAncesterTime = 5,

    /// <summary>varint64, seconds since the epoch.</summary>
    FileCreationTime = 6,

    /// <summary>Raw checksum bytes (empty when unknown).</summary>
    FileChecksum = 7,

    /// <summary>Name of the checksum function ("Unknown" when none).</summary>
    FileChecksumFuncName = 8,

    /// <summary>1 byte.</summary>
    Temperature = 9,

    MinTimestamp = 10,
    MaxTimestamp = 11,

    /// <summary>16 bytes: two fixed64 halves of the table's internal unique id.</summary>
    UniqueId = 12,

    /// <summary>varint64 (written by RocksDB 7.10 and later).</summary>
    EpochNumber = 13,

    /// <summary>
    /// varint64: estimated bytes of deeper levels the file's range tombstones delete (RocksDB 8.0's
    /// compensated_range_deletion_size, PR 10734). Safe to ignore: RocksDB 7.8 skips it.
    /// </summary>
    CompensatedRangeDeletionSize = 14,

    /// <summary>Bit marking fields a reader must understand.</summary>
    NonSafeIgnoreMask = 1 << 6,

    /// <summary>1 byte, 0..3: which db_paths entry holds the file.</summary>
    PathId = NonSafeIgnoreMask + 1,
}
