namespace KvEngine.Table;

/// <summary>
/// Constants of RocksDB's block-based table format (table/format.h, table/meta_blocks.cc).
/// Persisted names and numbers: never change them.
/// </summary>
internal static class TableFormat
{
    /// <summary>kBlockBasedTableMagicNumber, the footer's last 8 bytes (little-endian).</summary>
    public const ulong BlockBasedTableMagic = 0x88e241b785f4cff7UL;

    /// <summary>LevelDB's table magic (format_version 0, no checksum byte); recognised only to say so.</summary>
    public const ulong LegacyBlockBasedTableMagic = 0xdb4775248b80fb57UL;

    /// <summary>Every block is followed by its compression type byte and a fixed32 checksum.</summary>
    public const int BlockTrailerSize = 5;

    /// <summary>Footer of format_version 1..5: checksum byte, 40 bytes of handles and padding, version, magic.</summary>
    public const int FooterSize = 1 + (2 * BlockHandle.MaxEncodedLength) + 4 + 8;

    /// <summary>The only format_version this engine writes.</summary>
    public const int WriteFormatVersion = 5;

    public const int MinReadFormatVersion = 2;
    public const int MaxReadFormatVersion = 5;

    public const string PropertiesBlockName = "rocksdb.properties";
    public const string LegacyPropertiesBlockName = "rocksdb.stats";
    public const string RangeDelBlockName = "rocksdb.range_del";
    public const string CompressionDictBlockName = "rocksdb.compression_dict";
    public const string FullFilterBlockPrefix = "fullfilter.";
    public const string PartitionedFilterBlockPrefix = "partitionedfilter.";
    public const string LegacyFilterBlockPrefix = "filter.";
}
