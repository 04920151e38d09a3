using System.Buffers;
using System.Buffers.Binary;

namespace KvEngine;

/// <summary>
/// RocksDB's "uint64add" merge operator (utilities/merge_operators/uint64add.cc, Name()
/// <c>UInt64AddOperator</c>): values and operands are 8-byte little-endian unsigned counters, and a
/// merge adds them modulo 2^64. As in RocksDB, a value or operand that is not exactly 8 bytes long
/// counts as 0 (RocksDB logs an error and goes on), a missing base counts as 0, and merges never fail.
/// Stateless and thread-safe; allocation-free.
/// </summary>
public sealed class UInt64AddOperator : KvMergeOperator
{
    /// <summary>The name RocksDB persists for this operator.</summary>
    public const string OperatorName = "UInt64AddOperator";

    /// <summary>A shared instance (the operator is stateless).</summary>
    public static UInt64AddOperator Instance { get; } = new();

    /// <inheritdoc/>
    public override string Name => OperatorName;

    /// <summary>Decodes a counter as RocksDB's uint64add does: 8 bytes little-endian, anything else 0.</summary>
    /// <param name="value">A stored value or operand.</param>
    /// <returns>The counter.</returns>
    public static ulong Decode(ReadOnlySpan<byte> value) => value.Length == sizeof(ulong) ? BinaryPrimitives.ReadUInt64LittleEndian(value) : 0;

    /// <summary>Encodes a counter (or an increment) as the 8-byte little-endian value this operator reads.</summary>
    /// <param name="value">The counter.</param>
    /// <returns>A new 8-byte array.</returns>
    public static byte[] Encode(ulong value)
    {
        var bytes = new byte[sizeof(ulong)];
        BinaryPrimitives.WriteUInt64LittleEndian(bytes, value);
        return bytes;
    }

    /// <inheritdoc/>
    public override bool TryFullMerge(ReadOnlySpan<byte> key, bool hasExistingValue, ReadOnlySpan<byte> existingValue,
        IReadOnlyList<ReadOnlyMemory<byte>> operands, IBufferWriter<byte> result)
    {
        ArgumentNullException.ThrowIfNull(operands);
        ArgumentNullException.ThrowIfNull(result);
        ulong sum = hasExistingValue ? Decode(existingValue) : 0;
        for (int i = 0; i < operands.Count; i++)
        {
            sum = unchecked(sum + Decode(operands[i].Span));
        }
        Write(sum, result);
        return true;
    }

    /// <inheritdoc/>
    public override bool TryPartialMerge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> left, ReadOnlySpan<byte> right, IBufferWriter<byte> result)
    {
        ArgumentNullException.ThrowIfNull(result);
        Write(unchecked(Decode(left) + Decode(right)), result);
        return true;
    }

    /// <inheritdoc/>
    public override bool TryPartialMergeMulti(ReadOnlySpan<byte> key, IReadOnlyList<ReadOnlyMemory<byte>> operands, IBufferWriter<byte> result)
    {
        ArgumentNullException.ThrowIfNull(operands);
        ArgumentNullException.ThrowIfNull(result);
        ulong sum = 0;
        for (int i = 0; i < operands.Count; i++)
        {
            sum = unchecked(sum + Decode(operands[i].Span));
        }
        Write(sum, result);
        return true;
    }

    private static void Write(ulong value, IBufferWriter<byte> result)
    {
        BinaryPrimitives.WriteUInt64LittleEndian(result.GetSpan(sizeof(ulong)), value);
        result.Advance(sizeof(ulong));
    }
}
