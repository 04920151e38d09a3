namespace KvEngine.Wal;

/// <summary>
/// Constants of RocksDB's log file format (db/log_format.h), shared by WAL and MANIFEST files.
/// See docs/formats/log.md. Stateless.
/// </summary>
internal static class LogFormat
{
    /// <summary>Files are a sequence of blocks of this size; a record header never spans two.</summary>
    public const int BlockSize = 32 * 1024;

    /// <summary>checksum: fixed32, length: fixed16, type: uint8.</summary>
    public const int HeaderSize = 7;

    /// <summary>The header of recyclable records adds log number: fixed32.</summary>
    public const int RecyclableHeaderSize = HeaderSize + 4;

    /// <summary>Largest payload of one physical record (the length field is 16 bits).</summary>
    public const int MaxFragmentLength = BlockSize - HeaderSize;

    public static bool IsRecyclable(LogRecordType type) =>
        type >= LogRecordType.RecyclableFull && type <= LogRecordType.RecyclableLast;
}
