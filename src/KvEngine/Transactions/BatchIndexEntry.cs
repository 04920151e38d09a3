namespace KvEngine.Transactions;

/// <summary>
/// One node of a <see cref="BatchIndex"/>: a write in the batch's representation, by position
/// (the representation may move as it grows, so no span is kept). Ordered by (column family,
/// key bytewise, <see cref="Offset"/>). In overwrite mode a later Put or Delete of the same key
/// re-points the key's newest entry at the new record, whose offset is larger than every other
/// entry's, so the order holds. Not thread-safe (owned by one batch).
/// </summary>
internal sealed class BatchIndexEntry
{
    public BatchIndexEntry(int height) => Next = new BatchIndexEntry?[height];

    public uint ColumnFamily;
    public int Offset;
    public int KeyStart;
    public int KeyLength;
    public int ValueStart;
    public int ValueLength;
    public BatchEntryKind Kind;

    /// <summary>The forward links, one per level.</summary>
    public readonly BatchIndexEntry?[] Next;

    public ReadOnlySpan<byte> Key(ReadOnlySpan<byte> rep) => rep.Slice(KeyStart, KeyLength);

    public ReadOnlySpan<byte> Value(ReadOnlySpan<byte> rep) => rep.Slice(ValueStart, ValueLength);
}
