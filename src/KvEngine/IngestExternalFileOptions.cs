namespace KvEngine;

/// <summary>
/// How <see cref="KvDb.IngestExternalFile(IReadOnlyList{string}, IngestExternalFileOptions?)"/>
/// adds files to the database (RocksDB's IngestExternalFileOptions, with RocksDB 7.8's defaults).
/// A plain settings holder: not thread-safe while being changed; the ingestion reads it once.
/// </summary>
public sealed class IngestExternalFileOptions
{
    /// <summary>
    /// Hard-link the files into the database instead of copying them, and delete the original
    /// names once the ingestion succeeded (default false). The link shares the file's data: when
    /// the ingestion writes a global sequence number into the file (see
    /// <see cref="WriteGlobalSeqno"/>), the original changes too, as in RocksDB 7.8.
    /// </summary>
    public bool MoveFiles { get; set; }

    /// <summary>With <see cref="MoveFiles"/>: copy a file that cannot be linked (another device, no link support) instead of failing (default true).</summary>
    public bool FailedMoveFallBackToCopy { get; set; } = true;

    /// <summary>
    /// When a snapshot exists, give the files a new sequence number even if they overlap nothing,
    /// so the snapshot never sees them (default true).
    /// </summary>
    public bool SnapshotConsistency { get; set; } = true;

    /// <summary>
    /// Allow the files a new (global) sequence number when they overlap data in the database or
    /// each other (default true); false refuses such an ingestion.
    /// </summary>
    public bool AllowGlobalSeqNo { get; set; } = true;

    /// <summary>
    /// Flush the column family's memtables first when they hold keys in the files' range (default
    /// true); false refuses such an ingestion.
    /// </summary>
    public bool AllowBlockingFlush { get; set; } = true;

    /// <summary>
    /// Write an assigned global sequence number into the ingested file's properties (default true,
    /// RocksDB 7.8's default): older RocksDB versions then read the file correctly on their own.
    /// False keeps the file unchanged; the MANIFEST then supplies the number.
    /// </summary>
    public bool WriteGlobalSeqno { get; set; } = true;

    /// <summary>Verify every block checksum of each file before ingesting it (default false).</summary>
    public bool VerifyChecksumsBeforeIngest { get; set; }

    /// <summary>
    /// Refuse (with <see cref="InvalidOperationException"/>, RocksDB's TryAgain) an ingestion whose
    /// files would not go into the last level (default false).
    /// </summary>
    public bool FailIfNotBottommostLevel { get; set; }
}
