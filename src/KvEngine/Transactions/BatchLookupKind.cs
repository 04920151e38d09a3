namespace KvEngine.Transactions;

/// <summary>What a <see cref="WriteBatchWithIndex"/> says about one key (RocksDB's WBWIIteratorImpl::Result).</summary>
internal enum BatchLookupKind : byte
{
    /// <summary>The batch does not write the key.</summary>
    NotFound,

    /// <summary>The newest write is a Put (no merge after it).</summary>
    Put,

    /// <summary>The newest write is a Delete or SingleDelete (no merge after it).</summary>
    Deleted,

    /// <summary>Merge operands after a Put or Delete in the batch: the result needs no database read.</summary>
    MergeOnBatchBase,

    /// <summary>Only merge operands: they apply on top of whatever lies under the batch.</summary>
    MergeOnly,
}
