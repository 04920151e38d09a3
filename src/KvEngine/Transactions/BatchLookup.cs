using System.Buffers;

namespace KvEngine.Transactions;

/// <summary>
/// Resolves one key of a <see cref="WriteBatchWithIndex"/>: walks the key's index entries oldest
/// first, keeping the newest Put or Delete as the base and the merge operands after it, and
/// combines them with the family's merge operator when asked (RocksDB's
/// WriteBatchWithIndexInternal::GetFromBatch and MergeKey). Stateless apart from the caller's
/// scratch list.
/// </summary>
internal static class BatchLookup
{
    /// <summary>
    /// Classifies the key whose first entry is <paramref name="first"/>; <paramref name="baseEntry"/>
    /// receives the newest Put or Delete (null when none), <paramref name="operands"/> the merge
    /// entries after it, oldest first.
    /// </summary>
    public static BatchLookupKind Resolve(ReadOnlySpan<byte> rep, BatchIndexEntry? first, uint cf, ReadOnlySpan<byte> key,
        List<BatchIndexEntry> operands, out BatchIndexEntry? baseEntry)
    {
        operands.Clear();
        baseEntry = null;
        for (BatchIndexEntry? e = first; e != null && e.ColumnFamily == cf && e.Key(rep).SequenceEqual(key); e = e.Next[0])
        {
            if (e.Kind == BatchEntryKind.Merge)
            {
                operands.Add(e);
            }
            else
            {
                baseEntry = e;
                operands.Clear();
            }
        }
        if (operands.Count > 0)
        {
            return baseEntry == null ? BatchLookupKind.MergeOnly : BatchLookupKind.MergeOnBatchBase;
        }
        if (baseEntry == null)
        {
            return BatchLookupKind.NotFound;
        }
        return baseEntry.Kind == BatchEntryKind.Put ? BatchLookupKind.Put : BatchLookupKind.Deleted;
    }

    /// <summary>
    /// Full-merges <paramref name="operands"/> (entries in <paramref name="rep"/>, oldest first) on
    /// top of the base value into <paramref name="result"/>, which is cleared first.
    /// </summary>
    /// <exception cref="InvalidOperationException">The family has no merge operator.</exception>
    /// <exception cref="KvCorruptionException">The operator declined (RocksDB's "Could not perform merge").</exception>
    public static void Merge(KvMergeOperator? mergeOperator, string family, ReadOnlySpan<byte> rep, ReadOnlySpan<byte> key,
        bool hasBase, ReadOnlySpan<byte> baseValue, List<BatchIndexEntry> operands, ArrayBufferWriter<byte> result)
    {
        if (mergeOperator == null)
        {
            throw new InvalidOperationException(
                $"The batch holds merge operands for column family '{family}', which has no merge operator (RocksDB: Merge_operator must be set).");
        }
        var values = new ReadOnlyMemory<byte>[operands.Count];
        for (int i = 0; i < values.Length; i++)
        {
            values[i] = operands[i].Value(rep).ToArray();
        }
        result.ResetWrittenCount();
        if (!mergeOperator.TryFullMerge(key, hasBase, hasBase ? baseValue : default, values, result))
        {
            throw new KvCorruptionException(
                $"Could not perform merge: the merge operator '{mergeOperator.Name}' declined the operands of a key in the batch.");
        }
    }
}
