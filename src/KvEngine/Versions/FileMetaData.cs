namespace KvEngine.Versions;

/// <summary>
/// What the MANIFEST records about one table file (the persisted part of RocksDB's FileMetaData,
/// as a NewFile4 entry carries it). A plain mutable data holder; not thread-safe.
/// <see cref="Smallest"/> and <see cref="Largest"/> are internal keys (user key + 8-byte trailer).
/// Besides what the MANIFEST records, it caches whether the table holds range tombstones once its
/// reader has been opened (set with a volatile write, readable from any thread).
/// </summary>
internal sealed class FileMetaData
{
    /// <summary>RocksDB's kUnknownFileChecksumFuncName.</summary>
    public const string UnknownFileChecksumFuncName = "Unknown";

    public ulong Number { get; set; }

    /// <summary>Index into db_paths (0..3); 0 for the database directory.</summary>
    public uint PathId { get; set; }

    public ulong FileSize { get; set; }

    public byte[] Smallest { get; set; } = Array.Empty<byte>();

    public byte[] Largest { get; set; } = Array.Empty<byte>();

    public ulong SmallestSeqno { get; set; }

    public ulong LargestSeqno { get; set; }

    /// <summary>Flush time of the oldest data in the file (unix seconds), 0 when unknown.</summary>
    public ulong OldestAncesterTime { get; set; }

    /// <summary>When the file was written (unix seconds), 0 when unknown.</summary>
    public ulong FileCreationTime { get; set; }

    /// <summary>Whole-file checksum; empty when none was computed.</summary>
    public byte[] FileChecksum { get; set; } = Array.Empty<byte>();

    public string FileChecksumFuncName { get; set; } = UnknownFileChecksumFuncName;

    public bool MarkedForCompaction { get; set; }

    /// <summary>Integrated BlobDB only; 0 = none.</summary>
    public ulong OldestBlobFileNumber { get; set; }

    /// <summary>RocksDB's Temperature byte; 0 = unknown.</summary>
    public byte Temperature { get; set; }

    /// <summary>First half of the table's internal unique id; both halves 0 = none recorded.</summary>
    public ulong UniqueId0 { get; set; }

    public ulong UniqueId1 { get; set; }

    /// <summary>Order of flush/ingestion (RocksDB 7.10+); 0 = unknown, not written.</summary>
    public ulong EpochNumber { get; set; }

    /// <summary>
    /// Estimated bytes of deeper levels the file's range tombstones delete (RocksDB's
    /// compensated_range_deletion_size, NewFile4 tag 14); 0 = none, not written. Added to the file's
    /// size when compaction picks, so tombstone-heavy files go down early.
    /// </summary>
    public ulong CompensatedRangeDeletionSize { get; set; }

    /// <summary>The size compaction picking uses: file size plus <see cref="CompensatedRangeDeletionSize"/>.</summary>
    public ulong CompensatedFileSize => FileSize + CompensatedRangeDeletionSize;

    public bool HasUniqueId => UniqueId0 != 0 || UniqueId1 != 0;

    // 0: not known yet, 1: the table holds no range tombstone, 2: it holds some.
    private int _rangeTombstones;

    /// <summary>
    /// The table is known to hold no range tombstone (its reader was opened and found none). In
    /// memory only: the MANIFEST does not record it. Any thread.
    /// </summary>
    public bool KnownToHaveNoRangeTombstones => Volatile.Read(ref _rangeTombstones) == 1;

    /// <summary>Whether the table holds range tombstones has been recorded (<see cref="RecordRangeTombstones"/>). Any thread.</summary>
    public bool RangeTombstonesKnown => Volatile.Read(ref _rangeTombstones) != 0;

    /// <summary>Records what the table's reader found (see <see cref="KnownToHaveNoRangeTombstones"/>). Any thread.</summary>
    public void RecordRangeTombstones(bool any) => Volatile.Write(ref _rangeTombstones, any ? 2 : 1);
}
