namespace KvEngine;

/// <summary>One write of a WAL record (see <see cref="WalFileReader"/>). Immutable.</summary>
public sealed class WalOperation
{
    internal WalOperation(WalOperationType type, uint columnFamily, byte[] key, byte[] value)
    {
        Type = type;
        ColumnFamily = columnFamily;
        Key = key;
        Value = value;
    }

    /// <summary>What the write does.</summary>
    public WalOperationType Type { get; }

    /// <summary>The id of the column family written (0: "default").</summary>
    public uint ColumnFamily { get; }

    /// <summary>The key; for <see cref="WalOperationType.DeleteRange"/> the range's first key.</summary>
    public ReadOnlyMemory<byte> Key { get; }

    /// <summary>
    /// The value of a put, the operand of a merge, the end (exclusive) of a range deletion; empty
    /// for deletions.
    /// </summary>
    public ReadOnlyMemory<byte> Value { get; }
}
