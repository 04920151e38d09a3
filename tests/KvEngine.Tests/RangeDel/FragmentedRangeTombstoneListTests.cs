using KvEngine.Format;
using KvEngine.Memtable;
using KvEngine.RangeDel;
using KvEngine.Tests.Db;

using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.RangeDel;

/// <summary>Fragmenting, covering-sequence lookups, stripes, and the memtable's cached list.</summary>
public sealed class FragmentedRangeTombstoneListTests
{
    private static FragmentedRangeTombstoneList Build(params (string Start, string End, ulong Seq)[] tombstones)
    {
        var f = new RangeTombstoneFragmenter();
        foreach ((string s, string e, ulong q) in tombstones)
        {
            f.Add(DbTestUtil.B(s), DbTestUtil.B(e), q);
        }
        return f.Finish();
    }

    private static string Describe(FragmentedRangeTombstoneList list)
    {
        var parts = new List<string>();
        for (int i = 0; i < list.Count; i++)
        {
            parts.Add($"[{DbTestUtil.S(list.Start(i))},{DbTestUtil.S(list.End(i))}){{{string.Join(',', list.Sequences(i).ToArray())}}}");
        }
        return string.Join(" ", parts);
    }

    [Fact]
    public void FragmentsOverlappingTombstonesAsTheAlgorithmDescribes()
    {
        Assert.Equal("[a,c){10} [c,e){15,10} [e,g){15}", Describe(Build(("a", "e", 10), ("c", "g", 15))));
        // Adjacent spans with the same sequences merge; gaps and empty ranges leave no fragment.
        Assert.Equal("[a,c){5} [d,f){7}", Describe(Build(("a", "b", 5), ("b", "c", 5), ("d", "f", 7), ("x", "x", 9))));
        Assert.Equal("[a,b){9,3} [b,z){9}", Describe(Build(("a", "z", 9), ("a", "b", 3))));
        Assert.True(Build().IsEmpty);
    }

    [Fact]
    public void MaxCoveringSequenceHonoursBoundsAndReadSequence()
    {
        FragmentedRangeTombstoneList list = Build(("b", "d", 10), ("c", "f", 20));
        Assert.Equal(0UL, list.MaxCoveringSequence("a"u8, 100));
        Assert.Equal(10UL, list.MaxCoveringSequence("b"u8, 100));
        Assert.Equal(20UL, list.MaxCoveringSequence("c"u8, 100));
        Assert.Equal(10UL, list.MaxCoveringSequence("c"u8, 19)); // the newer one is not visible yet
        Assert.Equal(0UL, list.MaxCoveringSequence("c"u8, 9));
        Assert.Equal(20UL, list.MaxCoveringSequence("ez"u8, 100));
        Assert.Equal(0UL, list.MaxCoveringSequence("f"u8, 100)); // end is exclusive
    }

    [Fact]
    public void ClipsToBounds()
    {
        var f = new RangeTombstoneFragmenter();
        f.Add("a"u8, "z"u8, 5, lower: DbTestUtil.B("c"), upper: DbTestUtil.B("m"));
        f.Add("n"u8, "p"u8, 6, lower: DbTestUtil.B("c"), upper: DbTestUtil.B("m"));
        Assert.Equal("[c,m){5}", Describe(f.Finish()));
    }

    [Fact]
    public void CompactionKeepsTheNewestPerStripeAndDropsWhatEverySnapshotSees()
    {
        FragmentedRangeTombstoneList list = Build(("a", "z", 5), ("a", "z", 8), ("a", "z", 12), ("a", "z", 30));
        ulong[] snapshots = [10, 20];
        Assert.Equal("[a,z){30,12,8}", Describe(RangeTombstoneFragmenter.ForCompaction(list, snapshots, dropVisibleToAll: false)));
        Assert.Equal("[a,z){30,12}", Describe(RangeTombstoneFragmenter.ForCompaction(list, snapshots, dropVisibleToAll: true)));
        Assert.True(RangeTombstoneFragmenter.ForCompaction(list, [], dropVisibleToAll: true).IsEmpty);
    }

    [Fact]
    public void MemTableBuildsItsListOnceAndAgainAfterEachDeleteRange()
    {
        using var mem = new MemTable();
        Assert.Null(mem.GetRangeTombstones());
        mem.Add(1, ValueType.Value, "b"u8, "v"u8);
        mem.Add(2, ValueType.RangeDeletion, "a"u8, "c"u8);
        FragmentedRangeTombstoneList first = mem.GetRangeTombstones()!;
        Assert.Same(first, mem.GetRangeTombstones());
        Assert.Equal(2UL, first.MaxCoveringSequence("b"u8, InternalKeys.MaxSequenceNumber));
        mem.Add(3, ValueType.RangeDeletion, "b"u8, "d"u8);
        FragmentedRangeTombstoneList second = mem.GetRangeTombstones()!;
        Assert.NotSame(first, second);
        Assert.Equal(3UL, second.MaxCoveringSequence("b"u8, InternalKeys.MaxSequenceNumber));
        Assert.Equal(2UL, first.MaxCoveringSequence("b"u8, InternalKeys.MaxSequenceNumber)); // old readers keep theirs
    }

    [Fact]
    public async Task ReadersRacingDeleteRangesSeeEveryTombstoneTheirSequenceCovers()
    {
        // One writer adds tombstones [k_i, k_i+1) at sequence i and then publishes i; readers take
        // the published sequence first, then the list: it must cover every published tombstone.
        using var mem = new MemTable();
        long published = 0;
        const int Count = 400;
        var readers = new Task[2];
        int failures = 0;
        for (int r = 0; r < readers.Length; r++)
        {
            readers[r] = Task.Run(() =>
            {
                while (Volatile.Read(ref published) < Count)
                {
                    ulong seq = (ulong)Volatile.Read(ref published);
                    FragmentedRangeTombstoneList? list = mem.GetRangeTombstones();
                    if (seq > 0 && (list == null || list.MaxCoveringSequence(DbTestUtil.B($"k{seq:D4}"), seq) != seq))
                    {
                        Interlocked.Increment(ref failures);
                    }
                }
            });
        }
        for (int i = 1; i <= Count; i++)
        {
            mem.Add((ulong)i, ValueType.RangeDeletion, DbTestUtil.B($"k{i:D4}"), DbTestUtil.B($"k{i + 1:D4}"));
            Volatile.Write(ref published, i);
        }
        await Task.WhenAll(readers);
        Assert.Equal(0, failures);
    }
}
