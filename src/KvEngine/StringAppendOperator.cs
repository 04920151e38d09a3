using System.Buffers;

namespace KvEngine;

/// <summary>
/// RocksDB's string-append merge operator (utilities/merge_operators/string_append/stringappend.cc,
/// Name() <c>StringAppendOperator</c>, db_bench's "stringappend"): each operand is appended to the
/// value, with the delimiter between them (a missing base is just the operands joined). As RocksDB's
/// StringAppendOperator, it is associative: operands also combine pairwise during compaction.
/// Immutable and thread-safe; allocation-free.
/// </summary>
public sealed class StringAppendOperator : KvMergeOperator
{
    /// <summary>The name RocksDB persists for this operator.</summary>
    public const string OperatorName = "StringAppendOperator";

    private readonly byte[] _delimiter;

    /// <summary>An operator joining with a comma (RocksDB's default delimiter).</summary>
    public StringAppendOperator()
        : this((byte)',')
    {
    }

    /// <summary>An operator joining with one delimiter byte (RocksDB's char delimiter).</summary>
    /// <param name="delimiter">The byte written between value and operands.</param>
    public StringAppendOperator(byte delimiter)
    {
        _delimiter = [delimiter];
    }

    /// <summary>An operator joining with a delimiter of any length, possibly empty (RocksDB's string delimiter).</summary>
    /// <param name="delimiter">The bytes written between value and operands.</param>
    public StringAppendOperator(ReadOnlySpan<byte> delimiter)
    {
        _delimiter = delimiter.ToArray();
    }

    /// <summary>The delimiter.</summary>
    public ReadOnlySpan<byte> Delimiter => _delimiter;

    /// <inheritdoc/>
    public override string Name => OperatorName;

    /// <inheritdoc/>
    public override bool TryFullMerge(ReadOnlySpan<byte> key, bool hasExistingValue, ReadOnlySpan<byte> existingValue,
        IReadOnlyList<ReadOnlyMemory<byte>> operands, IBufferWriter<byte> result)
    {
        ArgumentNullException.ThrowIfNull(operands);
        ArgumentNullException.ThrowIfNull(result);
        bool first = true;
        if (hasExistingValue)
        {
            result.Write(existingValue);
            first = false;
        }
        for (int i = 0; i < operands.Count; i++)
        {
            if (!first)
            {
                result.Write(_delimiter);
            }
            result.Write(operands[i].Span);
            first = false;
        }
        return true;
    }

    /// <inheritdoc/>
    public override bool TryPartialMerge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> left, ReadOnlySpan<byte> right, IBufferWriter<byte> result)
    {
        ArgumentNullException.ThrowIfNull(result);
        result.Write(left);
        result.Write(_delimiter);
        result.Write(right);
        return true;
    }

    /// <inheritdoc/>
    public override bool TryPartialMergeMulti(ReadOnlySpan<byte> key, IReadOnlyList<ReadOnlyMemory<byte>> operands, IBufferWriter<byte> result) =>
        TryFullMerge(key, hasExistingValue: false, default, operands, result);
}
