namespace KvEngine.Iterators;

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
}
