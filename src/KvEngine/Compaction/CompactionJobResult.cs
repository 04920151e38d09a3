using KvEngine.Versions;

namespace KvEngine.Compaction;

/// <summary>What a finished <see cref="CompactionJob"/> produced. Plain data.</summary>
internal sealed class CompactionJobResult
{
    public required VersionEdit Edit { get; init; }

    public required IReadOnlyList<FileMetaData> Outputs { get; init; }

    /// <summary>Bytes of the start-level input files.</summary>
    public long BytesReadStartLevel { get; init; }

    /// <summary>Bytes of the output-level input files.</summary>
    public long BytesReadOutputLevel { get; init; }

    public long BytesWritten { get; init; }

    public long KeysIn { get; init; }

    /// <summary>Outputs cut per <see cref="OutputCutReason"/> (the last output, cut by the end of the input, is not counted).</summary>
    public long[] OutputCuts { get; init; } = new long[4];

    public long KeysDropped { get; init; }

    /// <summary>Values the compaction filter removed (RocksDB's num_record_drop_user).</summary>
    public long KeysDroppedByFilter { get; init; }
}
