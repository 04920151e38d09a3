namespace KvEngine.Table;

/// <summary>
/// Facts about one table file that go into its properties block (column family, times, DB
/// identity). Times are Unix seconds; 0 means unknown (FileCreationTime 0 means "now").
/// Immutable record.
/// </summary>
internal sealed record TableBuildContext
{
    public uint ColumnFamilyId { get; init; }

    public string ColumnFamilyName { get; init; } = "default";

    public ulong CreationTime { get; init; }

    public ulong OldestKeyTime { get; init; }

    public ulong FileCreationTime { get; init; }

    public ulong OriginalFileNumber { get; init; }

    public string DbId { get; init; } = "";

    public string DbSessionId { get; init; } = "";

    public string DbHostId { get; init; } = "";

    /// <summary>
    /// Write no rocksdb.file.creation.time (SstFileWriter's files carry 0, which RocksDB omits);
    /// otherwise 0 in <see cref="FileCreationTime"/> means "now".
    /// </summary>
    public bool OmitFileCreationTime { get; init; }

    /// <summary>Extra properties written as they are (RocksDB's table properties collectors' output).</summary>
    public IReadOnlyDictionary<string, byte[]>? UserProperties { get; init; }

    public static TableBuildContext Default { get; } = new();
}
