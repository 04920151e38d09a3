namespace KvEngine.RangeDel;

/// <summary>
/// Builds a <see cref="FragmentedRangeTombstoneList"/>: collects tombstones [start, end) at a
/// sequence in any order, then sweeps the sorted boundary keys once, keeping the set of tombstones
/// open at each boundary (RocksDB's FragmentedRangeTombstoneList constructor). Adjacent fragments
/// with the same sequence set are merged. Cost O(B log B + F x A) for B boundaries, F fragments and
/// A tombstones open at once. Not thread-safe; one use.
/// </summary>
internal sealed class RangeTombstoneFragmenter
{
    private readonly List<(byte[] Start, byte[] End, ulong Seq)> _tombstones = [];

    /// <summary>Adds [start, end) at <paramref name="sequence"/>, clipped to [lower, upper) when given.</summary>
    public void Add(ReadOnlySpan<byte> start, ReadOnlySpan<byte> end, ulong sequence, byte[]? lower = null, byte[]? upper = null)
    {
        if (lower != null && start.SequenceCompareTo(lower) < 0)
        {
            start = lower;
        }
        if (upper != null && end.SequenceCompareTo(upper) > 0)
        {
            end = upper;
        }
        if (start.SequenceCompareTo(end) >= 0)
        {
            return;
        }
        _tombstones.Add((start.ToArray(), end.ToArray(), sequence));
    }

    public FragmentedRangeTombstoneList Finish()
    {
        if (_tombstones.Count == 0)
        {
            return FragmentedRangeTombstoneList.Empty;
        }
        _tombstones.Sort(static (a, b) => a.Start.AsSpan().SequenceCompareTo(b.Start));
        var bounds = new List<byte[]>(_tombstones.Count * 2);
        foreach ((byte[] s, byte[] e, _) in _tombstones)
        {
            bounds.Add(s);
            bounds.Add(e);
        }
        bounds.Sort(static (a, b) => a.AsSpan().SequenceCompareTo(b));

        var starts = new List<byte[]>();
        var ends = new List<byte[]>();
        var seqStart = new List<int> { 0 };
        var seqs = new List<ulong>();
        var open = new List<(byte[] End, ulong Seq)>();
        var current = new List<ulong>();
        int next = 0;
        for (int b = 0; b < bounds.Count - 1; b++)
        {
            byte[] from = bounds[b];
            byte[] to = bounds[b + 1];
            if (from.AsSpan().SequenceEqual(to))
            {
                continue;
            }
            while (next < _tombstones.Count && _tombstones[next].Start.AsSpan().SequenceCompareTo(from) <= 0)
            {
                open.Add((_tombstones[next].End, _tombstones[next].Seq));
                next++;
            }
            for (int j = open.Count - 1; j >= 0; j--)
            {
                if (open[j].End.AsSpan().SequenceCompareTo(from) <= 0)
                {
                    open.RemoveAt(j);
                }
            }
            if (open.Count == 0)
            {
                continue;
            }
            current.Clear();
            foreach ((_, ulong seq) in open)
            {
                current.Add(seq);
            }
            current.Sort(static (x, y) => y.CompareTo(x));
            int last = starts.Count - 1;
            if (last >= 0 && ends[last].AsSpan().SequenceEqual(from) && SameSequences(seqs, seqStart[last], current))
            {
                ends[last] = to;
                continue;
            }
            starts.Add(from);
            ends.Add(to);
            seqs.AddRange(current);
            seqStart.Add(seqs.Count);
        }
        return new FragmentedRangeTombstoneList(starts.ToArray(), ends.ToArray(), seqStart.ToArray(), seqs.ToArray(), _tombstones.Count);
    }

    /// <summary>
    /// For a compaction output: of each fragment's sequences keeps only the newest in each snapshot
    /// stripe (a reader at any snapshot sees the same coverage), and with
    /// <paramref name="dropVisibleToAll"/> (the output is the bottom of the tree) drops those at or
    /// below the earliest snapshot, which have nothing left to delete. Fragments left without a
    /// sequence disappear.
    /// </summary>
    public static FragmentedRangeTombstoneList ForCompaction(FragmentedRangeTombstoneList list, ulong[] snapshotsAscending, bool dropVisibleToAll)
    {
        ulong earliest = snapshotsAscending.Length > 0 ? snapshotsAscending[0] : Format.InternalKeys.MaxSequenceNumber;
        var starts = new List<byte[]>();
        var ends = new List<byte[]>();
        var seqStart = new List<int> { 0 };
        var seqs = new List<ulong>();
        for (int i = 0; i < list.Count; i++)
        {
            int before = seqs.Count;
            int lastStripe = -1;
            foreach (ulong seq in list.Sequences(i))
            {
                if (dropVisibleToAll && seq <= earliest)
                {
                    break;
                }
                int stripe = StripeOf(snapshotsAscending, seq);
                if (stripe != lastStripe)
                {
                    seqs.Add(seq);
                    lastStripe = stripe;
                }
            }
            if (seqs.Count == before)
            {
                continue;
            }
            starts.Add(list.Start(i).ToArray());
            ends.Add(list.End(i).ToArray());
            seqStart.Add(seqs.Count);
        }
        return starts.Count == 0
            ? FragmentedRangeTombstoneList.Empty
            : new FragmentedRangeTombstoneList(starts.ToArray(), ends.ToArray(), seqStart.ToArray(), seqs.ToArray(), list.NumTombstones);
    }

    /// <summary>Index of the first snapshot &gt;= <paramref name="sequence"/> (the stripe of the sequence).</summary>
    public static int StripeOf(ulong[] snapshotsAscending, ulong sequence)
    {
        int lo = 0;
        int hi = snapshotsAscending.Length;
        while (lo < hi)
        {
            int mid = (lo + hi) >>> 1;
            if (snapshotsAscending[mid] < sequence)
            {
                lo = mid + 1;
            }
            else
            {
                hi = mid;
            }
        }
        return lo;
    }

    private static bool SameSequences(List<ulong> seqs, int from, List<ulong> current)
    {
        if (seqs.Count - from != current.Count)
        {
            return false;
        }
        for (int i = 0; i < current.Count; i++)
        {
            if (seqs[from + i] != current[i])
            {
                return false;
            }
        }
        return true;
    }
}
