namespace KvEngine.Table;

/// <summary>
/// The "rocksdb.properties" block of one table, typed (RocksDB's TableProperties). Numbers are
/// stored as varint64, strings as raw bytes; unknown properties land in
/// <see cref="UserCollected"/>. Built by the table builder, or read once by the table reader and
/// then treated as immutable.
/// </summary>
internal sealed class TableProperties
{
    public ulong OriginalFileNumber { get; set; }
    public ulong DataSize { get; set; }
    public ulong IndexSize { get; set; }
    public ulong IndexPartitions { get; set; }
    public ulong TopLevelIndexSize { get; set; }
    public ulong IndexKeyIsUserKey { get; set; }
    public ulong IndexValueIsDeltaEncoded { get; set; }
    public ulong FilterSize { get; set; }
    public ulong RawKeySize { get; set; }
    public ulong RawValueSize { get; set; }
    public ulong NumDataBlocks { get; set; }
    public ulong NumEntries { get; set; }
    public ulong NumFilterEntries { get; set; }
    public ulong NumDeletions { get; set; }
    public ulong NumMergeOperands { get; set; }
    public ulong NumRangeDeletions { get; set; }

    /// <summary>RocksDB writes 0 here for block-based tables (the footer holds the real format_version).</summary>
    public ulong FormatVersion { get; set; }
    public ulong FixedKeyLength { get; set; }
    public ulong ColumnFamilyId { get; set; }
    public ulong CreationTime { get; set; }
    public ulong OldestKeyTime { get; set; }
    public ulong FileCreationTime { get; set; }
    public ulong SlowCompressionEstimatedDataSize { get; set; }
    public ulong FastCompressionEstimatedDataSize { get; set; }

    public string DbId { get; set; } = "";
    public string DbSessionId { get; set; } = "";
    public string DbHostId { get; set; } = "";
    public string FilterPolicyName { get; set; } = "";
    public string ComparatorName { get; set; } = "";
    public string MergeOperatorName { get; set; } = "";
    public string PrefixExtractorName { get; set; } = "";
    public string PropertyCollectorsNames { get; set; } = "";
    public string ColumnFamilyName { get; set; } = "";
    public string CompressionName { get; set; } = "";
    public string CompressionOptions { get; set; } = "";

    /// <summary>Every property that is not one of the above, raw (includes RocksDB's block-based collector ones).</summary>
    public Dictionary<string, byte[]> UserCollected { get; } = new(StringComparer.Ordinal);

    /// <summary>From "rocksdb.block.based.table.index.type" (fixed32); BinarySearch when absent.</summary>
    public IndexType IndexType { get; set; } = IndexType.BinarySearch;

    /// <summary>From "rocksdb.block.based.table.whole.key.filtering" ("1"/"0").</summary>
    public bool WholeKeyFiltering { get; set; }

    /// <summary>From "rocksdb.block.based.table.prefix.filtering" ("1"/"0").</summary>
    public bool PrefixFiltering { get; set; }

    /// <summary>Offset in the file of the properties block (set by the reader).</summary>
    public ulong PropertiesOffset { get; set; }

    /// <summary>
    /// Absolute file offset of the value of <see cref="TablePropertyNames.ExternalSstFileGlobalSeqno"/>
    /// (0 when absent): where ingestion overwrites the 8-byte global sequence number in place.
    /// </summary>
    public ulong ExternalSstFileGlobalSeqnoOffset { get; set; }
}
