namespace KvEngine.Compaction;

/// <summary>
/// Work done into one output level (RocksDB's InternalStats::CompactionStats). A plain mutable
/// holder; <see cref="CompactionStatistics"/> guards it with its lock.
/// </summary>
internal sealed class LevelCompactionStats
{
    public long Count { get; set; }

    public long Micros { get; set; }

    /// <summary>Rn: bytes read from the start level (not the output level).</summary>
    public long BytesReadNonOutput { get; set; }

    /// <summary>Rnp1: bytes read from the output level.</summary>
    public long BytesReadOutput { get; set; }

    public long BytesWritten { get; set; }

    /// <summary>Bytes moved here by trivial moves.</summary>
    public long BytesMoved { get; set; }

    public long KeysIn { get; set; }

    public long KeysDropped { get; set; }

    /// <summary>Output files cut per <see cref="OutputCutReason"/> (KvEngine's addition, for write-amplification analysis).</summary>
    public long[] Cuts { get; } = new long[4];

    public void AddCuts(long[] cuts)
    {
        for (int i = 0; i < Cuts.Length; i++)
        {
            Cuts[i] += cuts[i];
        }
    }

    public void Add(LevelCompactionStats o)
    {
        AddCuts(o.Cuts);
        Count += o.Count;
        Micros += o.Micros;
        BytesReadNonOutput += o.BytesReadNonOutput;
        BytesReadOutput += o.BytesReadOutput;
        BytesWritten += o.BytesWritten;
        BytesMoved += o.BytesMoved;
        KeysIn += o.KeysIn;
        KeysDropped += o.KeysDropped;
    }
}
