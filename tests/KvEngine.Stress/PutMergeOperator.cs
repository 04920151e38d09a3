using System.Buffers;

namespace KvEngine.Stress;

/// <summary>
/// db_stress's merge operator for <c>-use_merge</c> (RocksDB's <c>MergeOperators::CreatePutOperator</c>,
/// named "PutOperator"): a merge behaves like a Put, so the newest operand is the value whatever lies
/// below it. Every write of a run then goes through the merge path (merge records in the WAL and in
/// tables, full merges in reads, partial merges in flush and compaction) while the expected state
/// stays that of Puts. Stateless; thread-safe.
/// </summary>
internal sealed class PutMergeOperator : KvMergeOperator
{
    public static readonly PutMergeOperator Instance = new();

    private PutMergeOperator()
    {
    }

    public override string Name => "PutOperator";

    public override bool TryFullMerge(ReadOnlySpan<byte> key, bool hasExistingValue, ReadOnlySpan<byte> existingValue,
        IReadOnlyList<ReadOnlyMemory<byte>> operands, IBufferWriter<byte> result)
    {
        result.Write(operands[^1].Span);
        return true;
    }

    public override bool TryPartialMerge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> left, ReadOnlySpan<byte> right, IBufferWriter<byte> result)
    {
        result.Write(right);
        return true;
    }
}
