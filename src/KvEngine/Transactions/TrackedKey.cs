namespace KvEngine.Transactions;

/// <summary>
/// A key an optimistic transaction wrote or read with GetForUpdate, and the sequence number it
/// was tracked at: the commit fails if the key was written after it. Immutable.
/// </summary>
internal readonly record struct TrackedKey(uint ColumnFamily, byte[] Key, ulong Sequence);
