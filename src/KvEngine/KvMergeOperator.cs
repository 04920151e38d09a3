using System.Buffers;

namespace KvEngine;

/// <summary>
/// Combines merge operands (written with <see cref="KvDb.Merge(ReadOnlySpan{byte}, ReadOnlySpan{byte}, WriteOptions)"/> or <see cref="WriteBatch.Merge(ReadOnlySpan{byte}, ReadOnlySpan{byte})"/>)
/// into a value, so that read-modify-write updates such as counters or appends need no read
/// (RocksDB's MergeOperator). Set one in <see cref="ColumnFamilyOptions.MergeOperator"/>.
/// <para>
/// Semantics (RocksDB's): a read collects a key's operands newest first until it meets a value
/// (the base), a deletion or range tombstone (no base) or the end of the key's history, then calls
/// <see cref="TryFullMerge"/> with the operands oldest first. Compaction merges what it can: a full
/// merge when it reaches the base (or the bottom of the tree), otherwise
/// <see cref="TryPartialMergeMulti"/> of the operands between two snapshots; a partial merge that
/// declines (returns false) leaves the operands as they are.
/// </para>
/// <para>
/// <see cref="Name"/> is written into every table as the <c>rocksdb.merge.operator</c> property;
/// a database whose tables hold operands opens only with an operator of the same name.
/// </para>
/// <para>
/// Thread-safety: one instance serves every read and compaction concurrently, so implementations
/// must be thread-safe (stateless is best). They run on the read path: they should not block, and
/// should write into the given buffer writer rather than allocate.
/// </para>
/// </summary>
public abstract class KvMergeOperator
{
    /// <summary>The operator's name (RocksDB's MergeOperator::Name), persisted in tables.</summary>
    public abstract string Name { get; }

    /// <summary>
    /// Computes the new value of <paramref name="key"/> from its existing value (if any) and its
    /// operands (RocksDB's FullMergeV2).
    /// </summary>
    /// <param name="key">The user key.</param>
    /// <param name="hasExistingValue">False when the key has no base value (deleted, or never written).</param>
    /// <param name="existingValue">The base value; empty when <paramref name="hasExistingValue"/> is false.</param>
    /// <param name="operands">The operands, oldest first; at least one. Valid only during the call.</param>
    /// <param name="result">Receives the merged value (empty when called).</param>
    /// <returns>False when the operands cannot be merged: the read or compaction then fails with
    /// <see cref="KvCorruptionException"/> (RocksDB's "Could not perform merge").</returns>
    public abstract bool TryFullMerge(ReadOnlySpan<byte> key, bool hasExistingValue, ReadOnlySpan<byte> existingValue,
        IReadOnlyList<ReadOnlyMemory<byte>> operands, IBufferWriter<byte> result);

    /// <summary>
    /// Combines two operands into one that has the same effect (RocksDB's PartialMerge); the default
    /// declines. Must not depend on a base value.
    /// </summary>
    /// <param name="key">The user key.</param>
    /// <param name="left">The older operand.</param>
    /// <param name="right">The newer operand.</param>
    /// <param name="result">Receives the combined operand (empty when called).</param>
    /// <returns>True when <paramref name="result"/> holds the combined operand; false to keep both.</returns>
    public virtual bool TryPartialMerge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> left, ReadOnlySpan<byte> right, IBufferWriter<byte> result) => false;

    /// <summary>
    /// Combines two or more operands, oldest first, into one (RocksDB's PartialMergeMulti); the default
    /// folds <see cref="TryPartialMerge"/> left to right and declines as soon as it does.
    /// </summary>
    /// <param name="key">The user key.</param>
    /// <param name="operands">At least two operands, oldest first. Valid only during the call.</param>
    /// <param name="result">Receives the combined operand (empty when called).</param>
    /// <returns>True when <paramref name="result"/> holds the combined operand; false to keep them all.</returns>
    public virtual bool TryPartialMergeMulti(ReadOnlySpan<byte> key, IReadOnlyList<ReadOnlyMemory<byte>> operands, IBufferWriter<byte> result)
    {
        ArgumentNullException.ThrowIfNull(operands);
        ArgumentNullException.ThrowIfNull(result);
        if (operands.Count < 2)
        {
            throw new ArgumentException("A partial merge takes at least two operands.", nameof(operands));
        }
        if (operands.Count == 2)
        {
            return TryPartialMerge(key, operands[0].Span, operands[1].Span, result);
        }
        var left = new ArrayBufferWriter<byte>(operands[0].Length + operands[1].Length);
        var next = new ArrayBufferWriter<byte>(left.Capacity);
        if (!TryPartialMerge(key, operands[0].Span, operands[1].Span, left))
        {
            return false;
        }
        for (int i = 2; i < operands.Count - 1; i++)
        {
            next.ResetWrittenCount();
            if (!TryPartialMerge(key, left.WrittenSpan, operands[i].Span, next))
            {
                return false;
            }
            (left, next) = (next, left);
        }
        return TryPartialMerge(key, left.WrittenSpan, operands[^1].Span, result);
    }
}
