using System.Buffers;

namespace KvEngine.Merge;

/// <summary>
/// Calls a <see cref="KvMergeOperator"/> the way RocksDB's MergeHelper::TimedFullMerge does, turning
/// its outcomes into KvEngine's errors: no operator configured is a <see cref="KvException"/>
/// (RocksDB's InvalidArgument "merge_operator is not properly initialized."), a declined full merge a
/// <see cref="KvCorruptionException"/> (RocksDB's Corruption "Could not perform merge."), and an
/// exception thrown by the operator a <see cref="KvException"/> naming it. Stateless, thread-safe.
/// </summary>
internal static class MergeHelper
{
    public const string NotInitializedMessage = "merge_operator is not properly initialized.";

    /// <summary>Throws the error a read or compaction meeting operands raises without an operator.</summary>
    public static KvException NotInitialized(ReadOnlySpan<byte> userKey) =>
        new($"{NotInitializedMessage} The key {Convert.ToHexString(userKey)} holds merge operands; set ColumnFamilyOptions.MergeOperator.",
            KvStatusCode.InvalidArgument, KvStatusSubCode.None, null);

    /// <summary>Full merge of <paramref name="operands"/> (at least one) over the base, into <paramref name="result"/>.</summary>
    public static void FullMerge(KvMergeOperator? op, ReadOnlySpan<byte> userKey, bool hasBase, ReadOnlySpan<byte> baseValue,
        MergeContext operands, IBufferWriter<byte> result)
    {
        if (op is null)
        {
            throw NotInitialized(userKey);
        }
        bool ok;
        try
        {
            ok = op.TryFullMerge(userKey, hasBase, hasBase ? baseValue : default, operands, result);
        }
        catch (Exception e) when (e is not KvException)
        {
            throw new KvException($"The merge operator '{op.Name}' failed: {e.Message}", KvStatusCode.Corruption, KvStatusSubCode.MergeOperatorFailed, e);
        }
        if (!ok)
        {
            throw new KvCorruptionException($"Error: Could not perform merge (operator '{op.Name}', key {Convert.ToHexString(userKey)}).");
        }
    }

    /// <summary>Partial merge of two or more operands; false (nothing written) when the operator declines.</summary>
    public static bool PartialMerge(KvMergeOperator op, ReadOnlySpan<byte> userKey, MergeContext operands, IBufferWriter<byte> result)
    {
        try
        {
            return op.TryPartialMergeMulti(userKey, operands, result);
        }
        catch (Exception e) when (e is not KvException)
        {
            throw new KvException($"The merge operator '{op.Name}' failed: {e.Message}", KvStatusCode.Corruption, KvStatusSubCode.MergeOperatorFailed, e);
        }
    }
}
