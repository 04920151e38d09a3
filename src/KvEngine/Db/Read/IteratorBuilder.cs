using KvEngine.Db.State;
using KvEngine.Iterators;
using KvEngine.Memtable;
using KvEngine.Table;
using KvEngine.Versions;

using Version = KvEngine.Versions.Version;

namespace KvEngine.Db.Read;

/// <summary>
/// Builds a family's iterator tree over a pinned read state (RocksDB's NewInternalIterator under
/// DBIter): a <see cref="MergingIterator"/> over the mutable memtable, the immutable memtables
/// newest first, each level-0 table newest first and one <see cref="LevelFiles"/> iterator per
/// non-empty deeper level, under a <see cref="DbIterator"/> at the read sequence with the state's
/// range tombstones; and takes back a parked spare tree (a disposed iterator's, see
/// <c>DbImpl.ReturnIterator</c>) that can serve a new iterator, so creating one allocates nothing
/// in steady state.
/// <para>
/// Invariants: the caller has pinned the read state before it took the sequence; the built
/// <see cref="PinnedIterator"/> owns that reference (it releases it when disposed), and a failed
/// build disposes the children it made and leaves the reference to the caller. A spare is taken
/// by an atomic exchange of its slot, so one spare goes to one iterator; a spare that cannot serve
/// (its state superseded or its options different) is disposed.
/// </para>
/// Thread-safety: stateless; any number of threads at once (the spare slots are exchanged atomically).
/// </summary>
internal static class IteratorBuilder
{
    /// <summary>A parked spare of <paramref name="cfd"/> over <paramref name="state"/> with these table options, taken from its slot; null when none can serve.</summary>
    public static PinnedIterator? TakeSpare(ColumnFamilyData cfd, ReadState state, bool verifyChecksums, bool fillCache, KvPrefixExtractor? prefixSeek, IteratorReads? reads)
    {
        ISpareIterator?[] spares = cfd.SpareIterators;
        for (int i = 0; i < spares.Length; i++)
        {
            if (Volatile.Read(ref spares[i]) is null)
            {
                continue;
            }
            var spare = (PinnedIterator?)Interlocked.Exchange(ref spares[i], null); // only the read path parks spares
            if (spare is null)
            {
                continue;
            }
            if (spare.CanServe(state, verifyChecksums, fillCache, prefixSeek, reads))
            {
                return spare;
            }
            spare.Dispose(); // stale: its read state is gone or its options differ
        }
        return null;
    }

    /// <summary>A new tree over <paramref name="state"/> at <paramref name="sequence"/>; the result holds the caller's reference on the state.</summary>
    public static PinnedIterator Build(ColumnFamilyData cfd, ReadState state, ulong sequence, bool verifyChecksums, bool fillCache, byte[]? lower, byte[]? upper, bool hasSnapshot,
        KvPrefixExtractor? prefixSeek, IteratorReads? reads)
    {
        // After the sequence: a memtable's tombstone list is current for every sequence we can see.
        RangeDel.FragmentedRangeTombstoneList? memTombstones = state.Mem.GetRangeTombstones();
        RangeDelAggregator? rangeDel = RangeDelAggregator.Create(state, cfd.Tables, sequence);
        Version v = state.Version;
        var children = new InternalIterator[1 + state.Immutable.Length + v.NumFiles(0) + CountNonEmptyLevels(v)];
        int n = 0;
        try
        {
            children[n++] = state.Mem.NewIterator();
            foreach (MemTable imm in state.Immutable)
            {
                children[n++] = imm.NewIterator();
            }
            foreach (Versions.FileMetaData f in v.Files(0))
            {
                children[n++] = cfd.Tables.Get(f, 0).NewIterator(verifyChecksums, fillCache, prefixFilter: prefixSeek != null, reads: reads);
            }
            for (int level = 1; level < Version.NumLevels; level++)
            {
                if (v.NumFiles(level) > 0)
                {
                    children[n++] = new LevelFiles(cfd.Tables, v.Files(level), verifyChecksums, fillCache, prefixSeek, reads: reads).CreateIterator();
                }
            }
        }
        catch
        {
            for (int i = 0; i < n; i++)
            {
                children[i].Dispose();
            }
            throw;
        }
        var merged = new MergingIterator(children, newestFirst: true); // memtable, immutables and level-0 files newest first, then levels 1..n
        var db = new DbIterator(merged, sequence, lower, upper, rangeDel, mergeOperator: cfd.Options.MergeOperator) { PrefixSeek = prefixSeek != null };
        return new PinnedIterator(cfd, db, state, rangeDel, memTombstones, verifyChecksums, fillCache, hasSnapshot) { PrefixSeek = prefixSeek, Reads = reads };
    }

    private static int CountNonEmptyLevels(Version v)
    {
        int n = 0;
        for (int level = 1; level < Version.NumLevels; level++)
        {
            if (v.NumFiles(level) > 0)
            {
                n++;
            }
        }
        return n;
    }
}
