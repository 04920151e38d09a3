namespace KvEngine.Db.Read;

/// <summary>
/// Answers whether a range tombstone visible at the reader's snapshot covers a point entry, i.e.
/// a tombstone [start, end) at sequence T with start &lt;= user key &lt; end and entry sequence &lt; T
/// &lt;= read sequence. <see cref="DbIterator"/> consults it for the newest visible Value (or Merge)
/// entry of each user key it would otherwise return. Implementations are bound to one snapshot and
/// used by one iterator at a time.
/// </summary>
internal interface IRangeDelAggregator
{
    /// <summary>True when <paramref name="internalKey"/> (user key + trailer) is deleted by a range tombstone.</summary>
    bool ShouldDelete(ReadOnlySpan<byte> internalKey);

    /// <summary>
    /// After <see cref="ShouldDelete"/> returned true: the covering tombstone fragment [start, end)
    /// and the merging-iterator child it came from. Every child after that one holds only entries
    /// older than the tombstone, so within [start, end) all of them are deleted and the iterator may
    /// move those children past the fragment at once (RocksDB's skip to the tombstone's end).
    /// False when the implementation knows no such child order (then nothing is skipped). The spans
    /// stay valid while the aggregator lives.
    /// </summary>
    bool TryGetLastCover(out int child, out ReadOnlySpan<byte> start, out ReadOnlySpan<byte> end)
    {
        child = -1;
        start = default;
        end = default;
        return false;
    }
}
