namespace KvEngine.Transactions;

/// <summary>The kind of write an index entry of a <see cref="WriteBatchWithIndex"/> points at.</summary>
internal enum BatchEntryKind : byte
{
    Put,
    Delete,
    SingleDelete,
    Merge,
}
