using KvEngine.Format;
using KvEngine.Iterators;

using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.RangeDel;

/// <summary>
/// Range tombstones cut into non-overlapping fragments (RocksDB's FragmentedRangeTombstoneList,
/// db/range_tombstone_fragmenter.cc): fragment i covers user keys [Start(i), End(i)) and carries the
/// sequence numbers of every tombstone covering that span, newest first. Fragments are sorted and
/// disjoint (End(i) &lt;= Start(i + 1)); a span no tombstone covers has no fragment.
/// Example: {[a,e)@10, [c,g)@15} -> [a,c){10}, [c,e){15,10}, [e,g){15}.
/// <para>
/// A tombstone [s, e) at sequence T deletes an entry of user key k at sequence q when s &lt;= k &lt; e,
/// q &lt; T, and the reader's sequence is &gt;= T. <see cref="MaxCoveringSequence"/> answers that
/// with one binary search and allocates nothing.
/// </para>
/// <para>
/// Built once (from a memtable's tombstones, a table's range_del block, or a compaction's inputs),
/// then immutable: any number of threads may query it.
/// </para>
/// </summary>
internal sealed class FragmentedRangeTombstoneList
{
    private static readonly byte[][] s_noKeys = [];

    private readonly byte[][] _starts;
    private readonly byte[][] _ends;
    private readonly int[] _seqStart; // fragment i's sequences are _seqs[_seqStart[i] .. _seqStart[i + 1])
    private readonly ulong[] _seqs;

    internal FragmentedRangeTombstoneList(byte[][] starts, byte[][] ends, int[] seqStart, ulong[] seqs, int numTombstones)
    {
        _starts = starts;
        _ends = ends;
        _seqStart = seqStart;
        _seqs = seqs;
        NumTombstones = numTombstones;
    }

    public static FragmentedRangeTombstoneList Empty { get; } = new(s_noKeys, s_noKeys, [0], [], 0);

    /// <summary>Number of fragments.</summary>
    public int Count => _starts.Length;

    public bool IsEmpty => _starts.Length == 0;

    /// <summary>Tombstones the list was built from (before fragmenting, after clipping).</summary>
    public int NumTombstones { get; }

    /// <summary>Approximate managed bytes the list holds: its key and sequence arrays (object headers estimated).</summary>
    public long ApproximateMemoryUsage
    {
        get
        {
            const int ArrayOverhead = 24; // object header, method table, length (64-bit)
            long bytes = 3 * ArrayOverhead + (long)_starts.Length * 2 * IntPtr.Size + (long)_seqStart.Length * sizeof(int) + (long)_seqs.Length * sizeof(ulong);
            for (int i = 0; i < _starts.Length; i++)
            {
                bytes += 2 * ArrayOverhead + _starts[i].Length + _ends[i].Length;
            }
            return bytes;
        }
    }

    public ReadOnlySpan<byte> Start(int fragment) => _starts[fragment];

    public ReadOnlySpan<byte> End(int fragment) => _ends[fragment];

    /// <summary>The sequence numbers of the tombstones covering the fragment, newest first.</summary>
    public ReadOnlySpan<ulong> Sequences(int fragment) =>
        _seqs.AsSpan(_seqStart[fragment], _seqStart[fragment + 1] - _seqStart[fragment]);

    /// <summary>Index of the first fragment whose end is after <paramref name="userKey"/>, or <see cref="Count"/>.</summary>
    public int FindFragment(ReadOnlySpan<byte> userKey)
    {
        int lo = 0;
        int hi = _ends.Length;
        while (lo < hi)
        {
            int mid = (lo + hi) >>> 1;
            if (userKey.SequenceCompareTo(_ends[mid]) >= 0)
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

    /// <summary>
    /// The fragment holding <paramref name="userKey"/>, or -1. Allocation-free.
    /// </summary>
    public int FragmentContaining(ReadOnlySpan<byte> userKey)
    {
        int i = FindFragment(userKey);
        return i < _starts.Length && userKey.SequenceCompareTo(_starts[i]) >= 0 ? i : -1;
    }

    /// <summary>The newest sequence at or below <paramref name="readSequence"/> in the fragment, or 0.</summary>
    public ulong VisibleSequence(int fragment, ulong readSequence)
    {
        int end = _seqStart[fragment + 1];
        for (int j = _seqStart[fragment]; j < end; j++)
        {
            if (_seqs[j] <= readSequence)
            {
                return _seqs[j];
            }
        }
        return 0;
    }

    /// <summary>
    /// The sequence of the newest tombstone visible at <paramref name="readSequence"/> that covers
    /// <paramref name="userKey"/>, or 0 when none does. Entries of the key with a smaller sequence are
    /// deleted. One binary search; allocation-free.
    /// </summary>
    public ulong MaxCoveringSequence(ReadOnlySpan<byte> userKey, ulong readSequence)
    {
        int i = FragmentContaining(userKey);
        return i < 0 ? 0 : VisibleSequence(i, readSequence);
    }

    /// <summary>
    /// Fragments the tombstones of <paramref name="tombstones"/> (key = start as an internal key of
    /// type RangeDeletion, value = end user key; any order, overlapping or not), clipped to
    /// [<paramref name="lower"/>, <paramref name="upper"/>) when given. Empty ranges are ignored.
    /// Malformed keys raise <see cref="KvCorruptionException"/>.
    /// </summary>
    public static FragmentedRangeTombstoneList Build(InternalIterator tombstones, byte[]? lower = null, byte[]? upper = null)
    {
        var fragmenter = new RangeTombstoneFragmenter();
        for (tombstones.SeekToFirst(); tombstones.Valid; tombstones.Next())
        {
            ReadOnlySpan<byte> key = tombstones.Key;
            if (key.Length < InternalKeys.TrailerSize || InternalKeys.Type(key) != ValueType.RangeDeletion)
            {
                throw new KvCorruptionException("A range tombstone's start is not an internal key of type RangeDeletion.");
            }
            fragmenter.Add(InternalKeys.UserKey(key), tombstones.Value, InternalKeys.Sequence(key), lower, upper);
        }
        return fragmenter.Finish();
    }
}
