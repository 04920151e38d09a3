using KvEngine.Format;
using KvEngine.RangeDel;
using KvEngine.Versions;

namespace KvEngine.Compaction;

/// <summary>
/// The range tombstones of one compaction (RocksDB's CompactionRangeDelAggregator): every input
/// table's tombstones, clipped to its file's boundaries, fragmented together and reduced to the
/// newest sequence per snapshot stripe.
/// <para>
/// A point entry at sequence q is dropped (<see cref="ShouldDelete"/>) when a tombstone covers its
/// user key with a sequence greater than q <em>in the same stripe</em>: with a snapshot between
/// them, that snapshot still reads the entry. The tombstones written to the outputs
/// (<see cref="Output"/>) are the same list, less — when nothing lies below the output level —
/// those at or below the earliest snapshot, which have nothing left to delete.
/// </para>
/// Immutable after construction; one compaction's or one flush's.
/// </summary>
internal sealed class CompactionRangeDelAggregator
{
    private readonly FragmentedRangeTombstoneList _stripes;
    private readonly ulong[] _snapshots;

    /// <param name="tables">Opens the inputs (their tombstones are clipped to their files).</param>
    /// <param name="inputs">Every input file of the compaction.</param>
    /// <param name="snapshotsAscending">Live snapshots.</param>
    /// <param name="bottommost">No file below the output level overlaps the compaction.</param>
    public CompactionRangeDelAggregator(TableCache tables, IEnumerable<FileMetaData> inputs, ulong[] snapshotsAscending, bool bottommost)
        : this(Collect(tables, inputs), snapshotsAscending, bottommost)
    {
    }

    /// <param name="all">Every tombstone of the input, fragmented, every sequence kept (a flush's memtables).</param>
    /// <param name="snapshotsAscending">Live snapshots.</param>
    /// <param name="bottommost">Nothing lies below the output (never for a flush: level 0 is on top of everything).</param>
    public CompactionRangeDelAggregator(FragmentedRangeTombstoneList all, ulong[] snapshotsAscending, bool bottommost)
    {
        _snapshots = snapshotsAscending;
        _stripes = RangeTombstoneFragmenter.ForCompaction(all, snapshotsAscending, dropVisibleToAll: false);
        Output = bottommost ? RangeTombstoneFragmenter.ForCompaction(all, snapshotsAscending, dropVisibleToAll: true) : _stripes;
    }

    private static FragmentedRangeTombstoneList Collect(TableCache tables, IEnumerable<FileMetaData> inputs)
    {
        var fragmenter = new RangeTombstoneFragmenter();
        foreach (FileMetaData f in inputs)
        {
            if (tables.Get(f).RangeTombstones is not { } list)
            {
                continue;
            }
            for (int i = 0; i < list.Count; i++)
            {
                foreach (ulong seq in list.Sequences(i))
                {
                    fragmenter.Add(list.Start(i), list.End(i), seq);
                }
            }
        }
        return fragmenter.Finish();
    }

    /// <summary>False when the inputs hold no tombstones (then nothing is ever deleted).</summary>
    public bool HasTombstones => !_stripes.IsEmpty;

    /// <summary>The tombstones to write to the outputs, fragmented, newest per stripe.</summary>
    public FragmentedRangeTombstoneList Output { get; }

    /// <summary>True when a tombstone of the entry's stripe, newer than it, covers it. Allocation-free.</summary>
    public bool ShouldDelete(ReadOnlySpan<byte> internalKey)
    {
        int fragment = _stripes.FragmentContaining(InternalKeys.UserKey(internalKey));
        if (fragment < 0)
        {
            return false;
        }
        ulong sequence = InternalKeys.Sequence(internalKey);
        int stripe = RangeTombstoneFragmenter.StripeOf(_snapshots, sequence);
        foreach (ulong seq in _stripes.Sequences(fragment))
        {
            if (seq <= sequence)
            {
                return false; // newest first: no newer tombstone remains
            }
            if (RangeTombstoneFragmenter.StripeOf(_snapshots, seq) == stripe)
            {
                return true;
            }
        }
        return false;
    }
}
