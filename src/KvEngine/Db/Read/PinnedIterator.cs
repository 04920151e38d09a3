using KvEngine.Db.State;
using KvEngine.Iterators;
using KvEngine.RangeDel;
using KvEngine.Table;

namespace KvEngine.Db.Read;

/// <summary>
/// A database iterator together with what it reads through (RocksDB's ArenaWrappedDBIter): the
/// <see cref="ReadState"/> it pins (one reference, dropped by <see cref="Dispose"/>), the
/// range-deletion aggregator built for it, the mutable memtable's tombstone list at build time, and
/// the options its table iterators were built with.
/// <para>
/// Reuse: while the family's current read state is still <see cref="State"/> and the mutable
/// memtable has taken no DeleteRange since the build (a DeleteRange replaces its tombstone list,
/// which the aggregator holds), the same iterator tree serves a read at any newer sequence after
/// <see cref="Reset"/> — the memtable iterators see entries added later and filter them by
/// sequence, and the tables are the same. This is how <see cref="KvIterator.Refresh"/> and a new
/// iterator taken from the database's spares allocate nothing.
/// </para>
/// Owned by one <see cref="KvIterator"/> at a time, or parked as a spare by its database. Not thread-safe.
/// </summary>
internal sealed class PinnedIterator : ISpareIterator
{
    private readonly RangeDelAggregator? _rangeDel;
    private readonly FragmentedRangeTombstoneList? _memTombstones;
    private bool _disposed;

    public PinnedIterator(ColumnFamilyData family, DbIterator iterator, ReadState state, RangeDelAggregator? rangeDel, FragmentedRangeTombstoneList? memTombstones,
        bool verifyChecksums, bool fillCache, bool hasSnapshot)
    {
        Family = family;
        Iterator = iterator;
        State = state;
        _rangeDel = rangeDel;
        _memTombstones = memTombstones;
        VerifyChecksums = verifyChecksums;
        FillCache = fillCache;
        HasSnapshot = hasSnapshot;
    }

    /// <summary>The column family the iterator reads.</summary>
    public ColumnFamilyData Family { get; }

    public DbIterator Iterator { get; }

    public ReadState State { get; }

    public bool VerifyChecksums { get; }

    public bool FillCache { get; }

    /// <summary>The prefix extractor its table iterators filter seeks with (prefix-seek mode), or null (total order).</summary>
    public KvPrefixExtractor? PrefixSeek { get; init; }

    /// <summary>How its table iterators read data blocks beyond the synchronous default (asynchronous prefetch, a scan's deferred reads), or null.</summary>
    public IteratorReads? Reads { get; init; }

    /// <summary>Created at a snapshot's sequence (then <see cref="KvIterator.Refresh"/> is not supported, as in RocksDB).</summary>
    public bool HasSnapshot { get; private set; }

    /// <summary>True when this iterator tree can read <paramref name="current"/> (the database's current read state) with these table options.</summary>
    public bool CanServe(ReadState current, bool verifyChecksums, bool fillCache, KvPrefixExtractor? prefixSeek, IteratorReads? reads) =>
        !_disposed && ReferenceEquals(current, State) && verifyChecksums == VerifyChecksums && fillCache == FillCache && ReferenceEquals(prefixSeek, PrefixSeek) &&
        ReferenceEquals(reads, Reads) &&
        ReferenceEquals(current.Mem.GetRangeTombstones(), _memTombstones);

    /// <summary>Makes the tree read at <paramref name="sequence"/> within the given bounds; not Valid until positioned.</summary>
    public void Reset(ulong sequence, byte[]? lowerBound, byte[]? upperBound, bool hasSnapshot)
    {
        _rangeDel?.Reset(sequence);
        Iterator.Reset(sequence, lowerBound, upperBound);
        HasSnapshot = hasSnapshot;
    }

    /// <summary>Disposes the iterator tree and unpins the read state (once).</summary>
    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }
        _disposed = true;
        Iterator.Dispose();
        State.Unref();
    }
}
