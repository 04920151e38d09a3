namespace KvEngine;

/// <summary>
/// One record of a WAL, a write batch (what <c>ldb dump_wal</c> prints per line): where it starts,
/// its first sequence number, its count, its size and its writes. Immutable.
/// </summary>
public sealed class WalRecordInfo
{
    internal WalRecordInfo(long offset, ulong sequence, int count, int byteSize, IReadOnlyList<WalOperation> operations)
    {
        Offset = offset;
        Sequence = sequence;
        Count = count;
        ByteSize = byteSize;
        Operations = operations;
    }

    /// <summary>The file offset of the record's first physical fragment (ldb: Physical Offset).</summary>
    public long Offset { get; }

    /// <summary>The sequence number of the batch's first write.</summary>
    public ulong Sequence { get; }

    /// <summary>The number of writes the batch header records.</summary>
    public int Count { get; }

    /// <summary>The size of the batch in bytes, header included (ldb: ByteSize).</summary>
    public int ByteSize { get; }

    /// <summary>The writes, in order.</summary>
    public IReadOnlyList<WalOperation> Operations { get; }
}
