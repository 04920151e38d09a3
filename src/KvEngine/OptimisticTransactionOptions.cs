namespace KvEngine;

/// <summary>Options of one optimistic transaction (RocksDB's OptimisticTransactionOptions). Not thread-safe while being set.</summary>
public sealed class OptimisticTransactionOptions
{
    /// <summary>
    /// Take a snapshot when the transaction begins (as <see cref="Transaction.SetSnapshot"/>): the
    /// commit then fails if any key the transaction writes or reads with GetForUpdate was written
    /// after the transaction began, not merely after the transaction first touched it.
    /// </summary>
    public bool SetSnapshot { get; set; }
}
