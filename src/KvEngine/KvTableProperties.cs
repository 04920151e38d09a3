using KvEngine.Table;

namespace KvEngine;

/// <summary>
/// The properties block of one table (RocksDB's TableProperties), as
/// <see cref="SstFileReader.GetTableProperties"/> reads it: the standard "rocksdb.*" properties
/// typed, every other property (those of table property collectors, and the block-based table's
/// own index type and filtering flags) raw in <see cref="UserCollectedProperties"/>. Immutable;
/// thread-safe.
/// </summary>
public sealed class KvTableProperties
{
    internal KvTableProperties(TableProperties p)
    {
        DataSize = p.DataSize;
        IndexSize = p.IndexSize;
        IndexPartitions = p.IndexPartitions;
        TopLevelIndexSize = p.TopLevelIndexSize;
        IndexKeyIsUserKey = p.IndexKeyIsUserKey;
        IndexValueIsDeltaEncoded = p.IndexValueIsDeltaEncoded;
        FilterSize = p.FilterSize;
        RawKeySize = p.RawKeySize;
        RawValueSize = p.RawValueSize;
        NumDataBlocks = p.NumDataBlocks;
        NumEntries = p.NumEntries;
        NumFilterEntries = p.NumFilterEntries;
        NumDeletions = p.NumDeletions;
        NumMergeOperands = p.NumMergeOperands;
        NumRangeDeletions = p.NumRangeDeletions;
        FormatVersion = p.FormatVersion;
        FixedKeyLength = p.FixedKeyLength;
        ColumnFamilyId = p.ColumnFamilyId;
        CreationTime = p.CreationTime;
        OldestKeyTime = p.OldestKeyTime;
        FileCreationTime = p.FileCreationTime;
        SlowCompressionEstimatedDataSize = p.SlowCompressionEstimatedDataSize;
        FastCompressionEstimatedDataSize = p.FastCompressionEstimatedDataSize;
        OriginalFileNumber = p.OriginalFileNumber;
        DbId = p.DbId;
        DbSessionId = p.DbSessionId;
        DbHostId = p.DbHostId;
        FilterPolicyName = p.FilterPolicyName;
        ComparatorName = p.ComparatorName;
        MergeOperatorName = p.MergeOperatorName;
        PrefixExtractorName = p.PrefixExtractorName;
        PropertyCollectorsNames = p.PropertyCollectorsNames;
        ColumnFamilyName = p.ColumnFamilyName;
        CompressionName = p.CompressionName;
        CompressionOptions = p.CompressionOptions;
        var user = new SortedDictionary<string, byte[]>(p.UserCollected, StringComparer.Ordinal)
        {
            // Written by RocksDB's internal collector (and by KvEngine) and listed by RocksDB among
            // the collected properties; typed here as NumDeletions and NumMergeOperands as well.
            [TablePropertyNames.DeletedKeys] = Varint(p.NumDeletions),
            [TablePropertyNames.MergeOperands] = Varint(p.NumMergeOperands),
        };
        UserCollectedProperties = user;
    }

    /// <summary>Bytes of the data blocks (rocksdb.data.size).</summary>
    public ulong DataSize { get; }

    /// <summary>Bytes of the index, partitions included (rocksdb.index.size).</summary>
    public ulong IndexSize { get; }

    /// <summary>Index partitions; 0 when the index is not partitioned (rocksdb.index.partitions).</summary>
    public ulong IndexPartitions { get; }

    /// <summary>Bytes of a partitioned index's top level (rocksdb.top-level.index.size).</summary>
    public ulong TopLevelIndexSize { get; }

    /// <summary>1 when index keys are user keys, not internal keys (rocksdb.index.key.is.user.key).</summary>
    public ulong IndexKeyIsUserKey { get; }

    /// <summary>1 when index values are delta-encoded (rocksdb.index.value.is.delta.encoded).</summary>
    public ulong IndexValueIsDeltaEncoded { get; }

    /// <summary>Bytes of the filter (rocksdb.filter.size).</summary>
    public ulong FilterSize { get; }

    /// <summary>Total bytes of the stored internal keys before compression (rocksdb.raw.key.size).</summary>
    public ulong RawKeySize { get; }

    /// <summary>Total bytes of the values before compression (rocksdb.raw.value.size).</summary>
    public ulong RawValueSize { get; }

    /// <summary>Data blocks (rocksdb.num.data.blocks).</summary>
    public ulong NumDataBlocks { get; }

    /// <summary>Point entries, deletions and merge operands included (rocksdb.num.entries).</summary>
    public ulong NumEntries { get; }

    /// <summary>Keys or prefixes added to the filter (rocksdb.num.filter_entries).</summary>
    public ulong NumFilterEntries { get; }

    /// <summary>Deletions, single and range deletions included (rocksdb.deleted.keys).</summary>
    public ulong NumDeletions { get; }

    /// <summary>Merge operands (rocksdb.merge.operands).</summary>
    public ulong NumMergeOperands { get; }

    /// <summary>Range deletions (rocksdb.num.range-deletions).</summary>
    public ulong NumRangeDeletions { get; }

    /// <summary>The block-based table's format_version (rocksdb.format.version).</summary>
    public ulong FormatVersion { get; }

    /// <summary>The fixed key length, 0 for variable keys (rocksdb.fixed.key.length).</summary>
    public ulong FixedKeyLength { get; }

    /// <summary>The id of the column family the table was written for; 2147483647 when unknown (rocksdb.column.family.id).</summary>
    public ulong ColumnFamilyId { get; }

    /// <summary>Unix time of the oldest data the table holds, 0 when unknown (rocksdb.creation.time).</summary>
    public ulong CreationTime { get; }

    /// <summary>Unix time of the table's oldest key, 0 when unknown (rocksdb.oldest.key.time).</summary>
    public ulong OldestKeyTime { get; }

    /// <summary>Unix time the file was written (rocksdb.file.creation.time).</summary>
    public ulong FileCreationTime { get; }

    /// <summary>Estimated data size under the slow sampled compression (rocksdb.sample_for_compression.slow.data.size).</summary>
    public ulong SlowCompressionEstimatedDataSize { get; }

    /// <summary>Estimated data size under the fast sampled compression (rocksdb.sample_for_compression.fast.data.size).</summary>
    public ulong FastCompressionEstimatedDataSize { get; }

    /// <summary>The file number the table was written under (rocksdb.original.file.number).</summary>
    public ulong OriginalFileNumber { get; }

    /// <summary>The identity of the database that wrote the table (rocksdb.creating.db.identity).</summary>
    public string DbId { get; }

    /// <summary>The session id of the writer (rocksdb.creating.session.identity).</summary>
    public string DbSessionId { get; }

    /// <summary>The writer's host (rocksdb.creating.host.identity).</summary>
    public string DbHostId { get; }

    /// <summary>The filter policy's name; empty without a filter (rocksdb.filter.policy).</summary>
    public string FilterPolicyName { get; }

    /// <summary>The comparator's name (rocksdb.comparator).</summary>
    public string ComparatorName { get; }

    /// <summary>The merge operator's name, "nullptr" when none (rocksdb.merge.operator).</summary>
    public string MergeOperatorName { get; }

    /// <summary>The prefix extractor's name, "nullptr" when none (rocksdb.prefix.extractor.name).</summary>
    public string PrefixExtractorName { get; }

    /// <summary>The names of the property collectors, as "[a,b]" (rocksdb.property.collectors).</summary>
    public string PropertyCollectorsNames { get; }

    /// <summary>The column family's name (rocksdb.column.family.name).</summary>
    public string ColumnFamilyName { get; }

    /// <summary>The compression of the data blocks, RocksDB's name (rocksdb.compression).</summary>
    public string CompressionName { get; }

    /// <summary>The compression options, RocksDB's text (rocksdb.compression_options).</summary>
    public string CompressionOptions { get; }

    /// <summary>
    /// Properties outside the standard set, by name, with their raw bytes (RocksDB's
    /// user_collected_properties), sorted by name as RocksDB stores them: those of table property
    /// collectors, the block-based table's index type and filtering flags, and, as in RocksDB,
    /// "rocksdb.deleted.keys" and "rocksdb.merge.operands" (varint64 counts).
    /// </summary>
    public IReadOnlyDictionary<string, byte[]> UserCollectedProperties { get; }

    private static byte[] Varint(ulong value)
    {
        Span<byte> buffer = stackalloc byte[10];
        int n = Util.Coding.EncodeVarint64(buffer, value);
        return buffer[..n].ToArray();
    }
}
