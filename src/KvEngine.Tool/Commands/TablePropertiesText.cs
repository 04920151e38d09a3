using System.Globalization;
using System.Text;

namespace KvEngine.Tool.Commands;

/// <summary>
/// A table's properties as sst_dump --show_properties prints them (RocksDB 7.8's
/// TableProperties::ToString("\n  ", ": ") and its "Raw user collected properties" list), and as a
/// JSON object.
/// </summary>
internal static class TablePropertiesText
{
    private const ulong UnknownColumnFamily = int.MaxValue;
    private const string SeqnoTimeMapProperty = "rocksdb.seqno.time.map";

    public static string Format(KvTableProperties p)
    {
        var s = new StringBuilder();
        s.Append("Table Properties:\n------------------------------\n  ");
        void Add(string name, string value) => s.Append(name).Append(": ").Append(value).Append("\n  ");
        void Num(string name, ulong value) => Add(name, value.ToString(CultureInfo.InvariantCulture));
        static string OrNa(string v) => v.Length == 0 ? "N/A" : v;
        Num("# data blocks", p.NumDataBlocks);
        Num("# entries", p.NumEntries);
        Num("# deletions", p.NumDeletions);
        Num("# merge operands", p.NumMergeOperands);
        Num("# range deletions", p.NumRangeDeletions);
        Num("raw key size", p.RawKeySize);
        Add("raw average key size", Average(p.RawKeySize, p.NumEntries));
        Num("raw value size", p.RawValueSize);
        Add("raw average value size", Average(p.RawValueSize, p.NumEntries));
        Num("data block size", p.DataSize);
        Num($"index block size (user-key? {p.IndexKeyIsUserKey}, delta-value? {p.IndexValueIsDeltaEncoded})", p.IndexSize);
        if (p.IndexPartitions != 0)
        {
            Num("# index partitions", p.IndexPartitions);
            Num("top-level index size", p.TopLevelIndexSize);
        }
        Num("filter block size", p.FilterSize);
        Num("# entries for filter", p.NumFilterEntries);
        Num("(estimated) table size", p.DataSize + p.IndexSize + p.FilterSize);
        Add("filter policy name", OrNa(p.FilterPolicyName));
        Add("prefix extractor name", OrNa(p.PrefixExtractorName));
        Add("column family ID", p.ColumnFamilyId == UnknownColumnFamily ? "N/A" : p.ColumnFamilyId.ToString(CultureInfo.InvariantCulture));
        Add("column family name", OrNa(p.ColumnFamilyName));
        Add("comparator name", OrNa(p.ComparatorName));
        Add("merge operator name", OrNa(p.MergeOperatorName));
        Add("property collectors names", OrNa(p.PropertyCollectorsNames));
        Add("SST file compression algo", OrNa(p.CompressionName));
        Add("SST file compression options", OrNa(p.CompressionOptions));
        Num("creation time", p.CreationTime);
        Num("time stamp of earliest key", p.OldestKeyTime);
        Num("file creation time", p.FileCreationTime);
        Num("slow compression estimated data size", p.SlowCompressionEstimatedDataSize);
        Num("fast compression estimated data size", p.FastCompressionEstimatedDataSize);
        Add("DB identity", p.DbId);
        Add("DB session identity", p.DbSessionId);
        Add("DB host id", p.DbHostId);
        Num("original file number", p.OriginalFileNumber);
        Add("unique ID", TableUniqueId.Compute(p) ?? "N/A");
        Add("Sequence number to time mapping", p.UserCollectedProperties.TryGetValue(SeqnoTimeMapProperty, out byte[]? map)
            ? $"({map.Length} bytes, shown raw below)" : "");
        s.Append("Raw user collected properties\n------------------------------\n");
        foreach ((string name, byte[] value) in p.UserCollectedProperties)
        {
            s.Append("  # ").Append(name).Append(": 0x").Append(Convert.ToHexString(value)).Append('\n');
        }
        return s.ToString();
    }

    public static void WriteJson(System.Text.Json.Utf8JsonWriter w, KvTableProperties p)
    {
        w.WriteStartObject("properties");
        w.WriteNumber("num_data_blocks", p.NumDataBlocks);
        w.WriteNumber("num_entries", p.NumEntries);
        w.WriteNumber("num_deletions", p.NumDeletions);
        w.WriteNumber("num_merge_operands", p.NumMergeOperands);
        w.WriteNumber("num_range_deletions", p.NumRangeDeletions);
        w.WriteNumber("raw_key_size", p.RawKeySize);
        w.WriteNumber("raw_value_size", p.RawValueSize);
        w.WriteNumber("data_size", p.DataSize);
        w.WriteNumber("index_size", p.IndexSize);
        w.WriteNumber("index_partitions", p.IndexPartitions);
        w.WriteNumber("top_level_index_size", p.TopLevelIndexSize);
        w.WriteNumber("index_key_is_user_key", p.IndexKeyIsUserKey);
        w.WriteNumber("index_value_is_delta_encoded", p.IndexValueIsDeltaEncoded);
        w.WriteNumber("filter_size", p.FilterSize);
        w.WriteNumber("num_filter_entries", p.NumFilterEntries);
        w.WriteNumber("format_version", p.FormatVersion);
        w.WriteNumber("fixed_key_len", p.FixedKeyLength);
        w.WriteNumber("column_family_id", p.ColumnFamilyId);
        w.WriteString("column_family_name", p.ColumnFamilyName);
        w.WriteString("filter_policy_name", p.FilterPolicyName);
        w.WriteString("comparator_name", p.ComparatorName);
        w.WriteString("merge_operator_name", p.MergeOperatorName);
        w.WriteString("prefix_extractor_name", p.PrefixExtractorName);
        w.WriteString("property_collectors_names", p.PropertyCollectorsNames);
        w.WriteString("compression_name", p.CompressionName);
        w.WriteString("compression_options", p.CompressionOptions);
        w.WriteNumber("creation_time", p.CreationTime);
        w.WriteNumber("oldest_key_time", p.OldestKeyTime);
        w.WriteNumber("file_creation_time", p.FileCreationTime);
        w.WriteNumber("slow_compression_estimated_data_size", p.SlowCompressionEstimatedDataSize);
        w.WriteNumber("fast_compression_estimated_data_size", p.FastCompressionEstimatedDataSize);
        w.WriteString("db_id", p.DbId);
        w.WriteString("db_session_id", p.DbSessionId);
        w.WriteString("db_host_id", p.DbHostId);
        w.WriteNumber("orig_file_number", p.OriginalFileNumber);
        w.WriteString("unique_id", TableUniqueId.Compute(p));
        w.WriteStartObject("user_collected_properties");
        foreach ((string name, byte[] value) in p.UserCollectedProperties)
        {
            w.WriteString(name, ToolContext.Hex(value));
        }
        w.WriteEndObject();
        w.WriteEndObject();
    }

    // std::to_string(double): printf's %f.
    private static string Average(ulong total, ulong count) =>
        (count != 0 ? 1.0 * total / count : 0.0).ToString("F6", CultureInfo.InvariantCulture);
}
