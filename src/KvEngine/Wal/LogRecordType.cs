namespace KvEngine.Wal;

/// <summary>
/// The type byte of a physical log record (RocksDB db/log_format.h).
/// Persisted in WAL and MANIFEST files, shared with RocksDB: never renumber.
/// </summary>
internal enum LogRecordType : byte
{
    /// <summary>Reserved for preallocated (zero-filled) file space; never written.</summary>
    Zero = 0,

    /// <summary>A whole logical record in one fragment.</summary>
    Full = 1,

    /// <summary>The first fragment of a logical record.</summary>
    First = 2,

    /// <summary>An inner fragment of a logical record.</summary>
    Middle = 3,

    /// <summary>The last fragment of a logical record.</summary>
    Last = 4,

    /// <summary>Like <see cref="Full"/>, with a 4-byte log number after the header (recycled logs).</summary>
    RecyclableFull = 5,

    RecyclableFirst = 6,

    RecyclableMiddle = 7,

    RecyclableLast = 8,

    /// <summary>
    /// RocksDB's WAL compression marker (first record of a log when <c>wal_compression</c> is on):
    /// payload fixed32 compression type. Only "no compression" is supported.
    /// </summary>
    SetCompressionType = 9,
}
