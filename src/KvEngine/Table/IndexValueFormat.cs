namespace KvEngine.Table;

/// <summary>
/// How index block values encode their block handles (RocksDB's IndexValue). Data and meta blocks
/// use <see cref="NotIndex"/>.
/// </summary>
internal enum IndexValueFormat
{
    /// <summary>Values are opaque bytes with an explicit length.</summary>
    NotIndex,

    /// <summary>value_length, then a full BlockHandle (format_version &lt; 4, or delta encoding off).</summary>
    Handle,

    /// <summary>No value_length; a full handle when shared == 0, else a varsigned size delta (format_version &gt;= 4).</summary>
    DeltaHandle,
}
