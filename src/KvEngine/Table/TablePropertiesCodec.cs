using System.Text;
using KvEngine.Util;

namespace KvEngine.Table;

// PropertiesBlock := Block (see BlockBuilder), one restart point, entries sorted bytewise by name:
//   key   := property name (e.g. "rocksdb.num.entries")
//   value := varint64 (numeric properties) | raw bytes (names, options, identities)
//            | fixed32 ("rocksdb.block.based.table.index.type") | "0"/"1" (filtering flags)

/// <summary>
/// Encodes and decodes <see cref="TableProperties"/> the way RocksDB 7.8 does
/// (PropertyBlockBuilder::AddTableProperty, ReadTablePropertiesHelper). Stateless, thread-safe.
/// </summary>
internal static class TablePropertiesCodec
{
    /// <summary>RocksDB's properties block has one restart point (restart interval "infinity").</summary>
    public const int RestartInterval = int.MaxValue;

    /// <summary>Adds every property to <paramref name="block"/> (an empty builder) in sorted order.</summary>
    public static void Encode(TableProperties p, BlockBuilder block)
    {
        var entries = new List<KeyValuePair<string, byte[]>>(48);
        void Num(string name, ulong value)
        {
            var b = new byte[Coding.VarintLength(value)];
            Coding.EncodeVarint64(b, value);
            entries.Add(new(name, b));
        }
        void Str(string name, string value)
        {
            if (value.Length > 0)
            {
                entries.Add(new(name, Encoding.UTF8.GetBytes(value)));
            }
        }

        Num(TablePropertyNames.OriginalFileNumber, p.OriginalFileNumber);
        Num(TablePropertyNames.RawKeySize, p.RawKeySize);
        Num(TablePropertyNames.RawValueSize, p.RawValueSize);
        Num(TablePropertyNames.DataSize, p.DataSize);
        Num(TablePropertyNames.IndexSize, p.IndexSize);
        if (p.IndexPartitions != 0)
        {
            Num(TablePropertyNames.IndexPartitions, p.IndexPartitions);
            Num(TablePropertyNames.TopLevelIndexSize, p.TopLevelIndexSize);
        }
        Num(TablePropertyNames.IndexKeyIsUserKey, p.IndexKeyIsUserKey);
        Num(TablePropertyNames.IndexValueIsDeltaEncoded, p.IndexValueIsDeltaEncoded);
        Num(TablePropertyNames.NumEntries, p.NumEntries);
        Num(TablePropertyNames.NumFilterEntries, p.NumFilterEntries);
        Num(TablePropertyNames.DeletedKeys, p.NumDeletions);
        Num(TablePropertyNames.MergeOperands, p.NumMergeOperands);
        Num(TablePropertyNames.NumRangeDeletions, p.NumRangeDeletions);
        Num(TablePropertyNames.NumDataBlocks, p.NumDataBlocks);
        Num(TablePropertyNames.FilterSize, p.FilterSize);
        Num(TablePropertyNames.FormatVersion, p.FormatVersion);
        Num(TablePropertyNames.FixedKeyLength, p.FixedKeyLength);
        Num(TablePropertyNames.ColumnFamilyId, p.ColumnFamilyId);
        Num(TablePropertyNames.CreationTime, p.CreationTime);
        Num(TablePropertyNames.OldestKeyTime, p.OldestKeyTime);
        if (p.FileCreationTime > 0)
        {
            Num(TablePropertyNames.FileCreationTime, p.FileCreationTime);
        }
        if (p.SlowCompressionEstimatedDataSize > 0)
        {
            Num(TablePropertyNames.SlowCompressionEstimatedDataSize, p.SlowCompressionEstimatedDataSize);
        }
        if (p.FastCompressionEstimatedDataSize > 0)
        {
            Num(TablePropertyNames.FastCompressionEstimatedDataSize, p.FastCompressionEstimatedDataSize);
        }
        Str(TablePropertyNames.DbId, p.DbId);
        Str(TablePropertyNames.DbSessionId, p.DbSessionId);
        Str(TablePropertyNames.DbHostId, p.DbHostId);
        Str(TablePropertyNames.FilterPolicy, p.FilterPolicyName);
        Str(TablePropertyNames.Comparator, p.ComparatorName);
        Str(TablePropertyNames.MergeOperator, p.MergeOperatorName);
        Str(TablePropertyNames.PrefixExtractorName, p.PrefixExtractorName);
        Str(TablePropertyNames.PropertyCollectors, p.PropertyCollectorsNames);
        Str(TablePropertyNames.ColumnFamilyName, p.ColumnFamilyName);
        Str(TablePropertyNames.Compression, p.CompressionName);
        Str(TablePropertyNames.CompressionOptions, p.CompressionOptions);

        var indexType = new byte[4];
        Coding.EncodeFixed32(indexType, (uint)p.IndexType);
        entries.Add(new(TablePropertyNames.IndexType, indexType));
        entries.Add(new(TablePropertyNames.WholeKeyFiltering, [p.WholeKeyFiltering ? (byte)'1' : (byte)'0']));
        entries.Add(new(TablePropertyNames.PrefixFiltering, [p.PrefixFiltering ? (byte)'1' : (byte)'0']));
        foreach (KeyValuePair<string, byte[]> kv in p.UserCollected)
        {
            if (entries.FindIndex(e => e.Key == kv.Key) < 0)
            {
                entries.Add(kv);
            }
        }

        // Names sort by their UTF-8 bytes (RocksDB's block is bytewise; UTF-16 ordinal order differs
        // past U+D7FF): each is encoded once, then sorted and added.
        var encoded = new List<(byte[] Name, byte[] Value)>(entries.Count);
        foreach (KeyValuePair<string, byte[]> kv in entries)
        {
            encoded.Add((Encoding.UTF8.GetBytes(kv.Key), kv.Value));
        }
        encoded.Sort(static (a, b) => a.Name.AsSpan().SequenceCompareTo(b.Name));
        foreach ((byte[] name, byte[] value) in encoded)
        {
            block.Add(name, value);
        }
    }

    /// <summary>
    /// Reads a properties block. Throws <see cref="KvCorruptionException"/> for unsorted or
    /// duplicate names and malformed numeric values.
    /// </summary>
    public static TableProperties Decode(Block block, ulong blockOffset)
    {
        var p = new TableProperties { PropertiesOffset = blockOffset };
        var cursor = new BlockCursor(block, BlockKeyFormat.Bytewise);
        try
        {
            byte[]? last = null;
            for (cursor.SeekToFirst(); cursor.Valid; cursor.Next())
            {
                ReadOnlySpan<byte> key = cursor.Key;
                if (last != null && key.SequenceCompareTo(last) <= 0)
                {
                    Block.Throw(block.Source, "properties block is not sorted");
                }
                last = key.ToArray();
                string name = Encoding.UTF8.GetString(key);
                Apply(p, name, cursor.Value, block.Source);
                if (name == TablePropertyNames.ExternalSstFileGlobalSeqno)
                {
                    p.ExternalSstFileGlobalSeqnoOffset = blockOffset + (ulong)cursor.ValueOffset;
                }
            }
        }
        finally
        {
            cursor.Dispose();
        }
        return p;
    }

    private static void Apply(TableProperties p, string name, ReadOnlySpan<byte> v, string source)
    {
        switch (name)
        {
            case TablePropertyNames.OriginalFileNumber: p.OriginalFileNumber = Num(name, v, source); break;
            case TablePropertyNames.DataSize: p.DataSize = Num(name, v, source); break;
            case TablePropertyNames.IndexSize: p.IndexSize = Num(name, v, source); break;
            case TablePropertyNames.IndexPartitions: p.IndexPartitions = Num(name, v, source); break;
            case TablePropertyNames.TopLevelIndexSize: p.TopLevelIndexSize = Num(name, v, source); break;
            case TablePropertyNames.IndexKeyIsUserKey: p.IndexKeyIsUserKey = Num(name, v, source); break;
            case TablePropertyNames.IndexValueIsDeltaEncoded: p.IndexValueIsDeltaEncoded = Num(name, v, source); break;
            case TablePropertyNames.FilterSize: p.FilterSize = Num(name, v, source); break;
            case TablePropertyNames.RawKeySize: p.RawKeySize = Num(name, v, source); break;
            case TablePropertyNames.RawValueSize: p.RawValueSize = Num(name, v, source); break;
            case TablePropertyNames.NumDataBlocks: p.NumDataBlocks = Num(name, v, source); break;
            case TablePropertyNames.NumEntries: p.NumEntries = Num(name, v, source); break;
            case TablePropertyNames.NumFilterEntries: p.NumFilterEntries = Num(name, v, source); break;
            case TablePropertyNames.DeletedKeys: p.NumDeletions = Num(name, v, source); break;
            case TablePropertyNames.MergeOperands: p.NumMergeOperands = Num(name, v, source); break;
            case TablePropertyNames.NumRangeDeletions: p.NumRangeDeletions = Num(name, v, source); break;
            case TablePropertyNames.FormatVersion: p.FormatVersion = Num(name, v, source); break;
            case TablePropertyNames.FixedKeyLength: p.FixedKeyLength = Num(name, v, source); break;
            case TablePropertyNames.ColumnFamilyId: p.ColumnFamilyId = Num(name, v, source); break;
            case TablePropertyNames.CreationTime: p.CreationTime = Num(name, v, source); break;
            case TablePropertyNames.OldestKeyTime: p.OldestKeyTime = Num(name, v, source); break;
            case TablePropertyNames.FileCreationTime: p.FileCreationTime = Num(name, v, source); break;
            case TablePropertyNames.SlowCompressionEstimatedDataSize: p.SlowCompressionEstimatedDataSize = Num(name, v, source); break;
            case TablePropertyNames.FastCompressionEstimatedDataSize: p.FastCompressionEstimatedDataSize = Num(name, v, source); break;
            case TablePropertyNames.DbId: p.DbId = Str(v); break;
            case TablePropertyNames.DbSessionId: p.DbSessionId = Str(v); break;
            case TablePropertyNames.DbHostId: p.DbHostId = Str(v); break;
            case TablePropertyNames.FilterPolicy: p.FilterPolicyName = Str(v); break;
            case TablePropertyNames.Comparator: p.ComparatorName = Str(v); break;
            case TablePropertyNames.MergeOperator: p.MergeOperatorName = Str(v); break;
            case TablePropertyNames.PrefixExtractorName: p.PrefixExtractorName = Str(v); break;
            case TablePropertyNames.PropertyCollectors: p.PropertyCollectorsNames = Str(v); break;
            case TablePropertyNames.ColumnFamilyName: p.ColumnFamilyName = Str(v); break;
            case TablePropertyNames.Compression: p.CompressionName = Str(v); break;
            case TablePropertyNames.CompressionOptions: p.CompressionOptions = Str(v); break;
            default:
                p.UserCollected[name] = v.ToArray();
                if (name == TablePropertyNames.IndexType)
                {
                    if (v.Length != 4)
                    {
                        Block.Throw(source, $"property {name} is not a fixed32");
                    }
                    p.IndexType = (IndexType)Coding.DecodeFixed32(v);
                }
                else if (name == TablePropertyNames.WholeKeyFiltering)
                {
                    p.WholeKeyFiltering = v.SequenceEqual("1"u8);
                }
                else if (name == TablePropertyNames.PrefixFiltering)
                {
                    p.PrefixFiltering = v.SequenceEqual("1"u8);
                }
                break;
        }
    }

    private static ulong Num(string name, ReadOnlySpan<byte> v, string source)
    {
        if (!Coding.TryDecodeVarint64(v, out ulong value, out int n) || n != v.Length)
        {
            Block.Throw(source, $"property {name} is not a varint64");
        }
        return value;
    }

    private static string Str(ReadOnlySpan<byte> v) => Encoding.UTF8.GetString(v);
}
