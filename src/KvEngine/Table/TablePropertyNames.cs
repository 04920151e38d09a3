namespace KvEngine.Table;

/// <summary>
/// RocksDB's property names (TablePropertiesNames, BlockBasedTablePropertyNames). Persisted
/// strings shared with RocksDB: never change them.
/// </summary>
internal static class TablePropertyNames
{
    public const string OriginalFileNumber = "rocksdb.original.file.number";

    /// <summary>SstFileWriter's file version (fixed32 LE; 2 since RocksDB 5.x). Its presence marks an external file.</summary>
    public const string ExternalSstFileVersion = "rocksdb.external_sst_file.version";

    /// <summary>An external file's global sequence number (fixed64 LE), overwritten in place at ingestion.</summary>
    public const string ExternalSstFileGlobalSeqno = "rocksdb.external_sst_file.global_seqno";
    public const string DataSize = "rocksdb.data.size";
    public const string IndexSize = "rocksdb.index.size";
    public const string IndexPartitions = "rocksdb.index.partitions";
    public const string TopLevelIndexSize = "rocksdb.top-level.index.size";
    public const string IndexKeyIsUserKey = "rocksdb.index.key.is.user.key";
    public const string IndexValueIsDeltaEncoded = "rocksdb.index.value.is.delta.encoded";
    public const string FilterSize = "rocksdb.filter.size";
    public const string RawKeySize = "rocksdb.raw.key.size";
    public const string RawValueSize = "rocksdb.raw.value.size";
    public const string NumDataBlocks = "rocksdb.num.data.blocks";
    public const string NumEntries = "rocksdb.num.entries";
    public const string NumFilterEntries = "rocksdb.num.filter_entries";
    public const string DeletedKeys = "rocksdb.deleted.keys";
    public const string MergeOperands = "rocksdb.merge.operands";
    public const string NumRangeDeletions = "rocksdb.num.range-deletions";
    public const string FormatVersion = "rocksdb.format.version";
    public const string FixedKeyLength = "rocksdb.fixed.key.length";
    public const string ColumnFamilyId = "rocksdb.column.family.id";
    public const string ColumnFamilyName = "rocksdb.column.family.name";
    public const string FilterPolicy = "rocksdb.filter.policy";
    public const string Comparator = "rocksdb.comparator";
    public const string MergeOperator = "rocksdb.merge.operator";
    public const string PrefixExtractorName = "rocksdb.prefix.extractor.name";
    public const string PropertyCollectors = "rocksdb.property.collectors";
    public const string Compression = "rocksdb.compression";
    public const string CompressionOptions = "rocksdb.compression_options";
    public const string CreationTime = "rocksdb.creation.time";
    public const string OldestKeyTime = "rocksdb.oldest.key.time";
    public const string FileCreationTime = "rocksdb.file.creation.time";
    public const string SlowCompressionEstimatedDataSize = "rocksdb.sample_for_compression.slow.data.size";
    public const string FastCompressionEstimatedDataSize = "rocksdb.sample_for_compression.fast.data.size";
    public const string DbId = "rocksdb.creating.db.identity";
    public const string DbSessionId = "rocksdb.creating.session.identity";
    public const string DbHostId = "rocksdb.creating.host.identity";

    // Written by RocksDB's BlockBasedTablePropertiesCollector (user-collected namespace).
    public const string IndexType = "rocksdb.block.based.table.index.type";
    public const string WholeKeyFiltering = "rocksdb.block.based.table.whole.key.filtering";
    public const string PrefixFiltering = "rocksdb.block.based.table.prefix.filtering";
}
