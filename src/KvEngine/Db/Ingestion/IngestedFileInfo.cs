namespace KvEngine.Db.Ingestion;

/// <summary>
/// One file of an ingestion (RocksDB's IngestedFileInfo): what its properties and keys say, where
/// its copy or link inside the database is, and the level and sequence number it was given.
/// Invariants: <see cref="Smallest"/> and <see cref="Largest"/> are internal keys bounding every
/// point entry and range tombstone of the file (a tombstone's end as the sentinel key); they carry
/// sequence number 0 until <see cref="ExternalSstFileIngestionJob.Run"/> assigns one. Owned by one
/// ingestion job; not thread-safe.
/// </summary>
internal sealed class IngestedFileInfo
{
    public IngestedFileInfo(string externalPath) => ExternalPath = externalPath;

    /// <summary>The caller's file.</summary>
    public string ExternalPath { get; }

    /// <summary>The file's new name inside the database (empty before the copy or link).</summary>
    public string InternalPath { get; set; } = "";

    /// <summary>The new name exists (created by this job): deleted again if the ingestion fails.</summary>
    public bool InternalFileCreated { get; set; }

    /// <summary>The file was copied (false: hard-linked).</summary>
    public bool Copied { get; set; }

    public ulong FileNumber { get; set; }

    public ulong FileSize { get; set; }

    /// <summary>rocksdb.external_sst_file.version (2 for every current writer).</summary>
    public uint Version { get; set; }

    /// <summary>The global sequence number the file records now (0 for a fresh SstFileWriter file).</summary>
    public ulong OriginalSeqno { get; set; }

    /// <summary>Absolute offset in the file of the 8-byte global sequence number value.</summary>
    public ulong GlobalSeqnoOffset { get; set; }

    public byte[] Smallest { get; set; } = [];

    public byte[] Largest { get; set; } = [];

    /// <summary>rocksdb.column.family.id (0x7FFFFFFF: written without a family).</summary>
    public uint ColumnFamilyId { get; set; }

    public ulong NumEntries { get; set; }

    public ulong NumRangeDeletions { get; set; }

    /// <summary>The level <see cref="ExternalSstFileIngestionJob.Run"/> picked.</summary>
    public int PickedLevel { get; set; }

    /// <summary>The sequence number every key of the file is read with once ingested.</summary>
    public ulong AssignedSeqno { get; set; }
}
