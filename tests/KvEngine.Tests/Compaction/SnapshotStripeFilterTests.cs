using KvEngine.Compaction;
using KvEngine.Format;

using static KvEngine.Tests.Compaction.CompactionTestUtil;
using ValueType = KvEngine.Format.ValueType;
using KvEngine.Versions;

namespace KvEngine.Tests.Compaction;

/// <summary>Keep/drop decisions of the compaction filter and the deeper-levels probe.</summary>
public sealed class SnapshotStripeFilterTests
{
    private static byte[] Ik(string k, ulong seq, ValueType t = ValueType.Value) => InternalKeys.Create(K(k), seq, t);

    [Fact]
    public void KeepsTheNewestVersionOfEachStripe()
    {
        using var f = new SnapshotStripeFilter(new ulong[] { 6, 20 });
        Assert.Equal(0, f.StripeOf(5));
        Assert.Equal(0, f.StripeOf(6));
        Assert.Equal(1, f.StripeOf(7));
        Assert.Equal(2, f.StripeOf(21));
        Assert.True(f.ShouldKeep(Ik("k", 10), null));   // stripe 1 newest
        Assert.False(f.ShouldKeep(Ik("k", 8), null));   // stripe 1, hidden by 10
        Assert.True(f.ShouldKeep(Ik("k", 5), null));    // stripe 0 newest: snapshot 6 reads it
        Assert.False(f.ShouldKeep(Ik("k", 3), null));
        Assert.True(f.ShouldKeep(Ik("l", 3), null));    // a new user key starts over
        Assert.Equal(2, f.DroppedShadowed);
    }

    [Fact]
    public void DropsDeletionsOnlyWhenNothingBelowAndEverySnapshotSeesThem()
    {
        KvEngine.Versions.Version empty = MakeVersion();
        using (var f = new SnapshotStripeFilter(Array.Empty<ulong>()))
        {
            var probe = new DeeperLevelsProbe(empty, 1);
            Assert.False(f.ShouldKeep(Ik("k", 4, ValueType.Deletion), probe));
            Assert.False(f.ShouldKeep(Ik("k", 2), probe)); // hidden by the dropped deletion
            Assert.Equal(1, f.DroppedDeletions);
        }
        KvEngine.Versions.Version below = MakeVersion((3, File(1, "j", "l", 100)));
        using (var f = new SnapshotStripeFilter(Array.Empty<ulong>()))
        {
            var probe = new DeeperLevelsProbe(below, 1);
            Assert.True(f.ShouldKeep(Ik("k", 4, ValueType.Deletion), probe)); // level 3 may hold k
            Assert.False(f.ShouldKeep(Ik("k", 2), probe));
            Assert.False(f.ShouldKeep(Ik("m", 9, ValueType.SingleDeletion), probe)); // nothing below m
        }
        using (var f = new SnapshotStripeFilter(new ulong[] { 3 }))
        {
            var probe = new DeeperLevelsProbe(empty, 1);
            Assert.True(f.ShouldKeep(Ik("k", 4, ValueType.Deletion), probe)); // snapshot 3 must still see k@2
            Assert.True(f.ShouldKeep(Ik("k", 2), probe));
        }
        using (var f = new SnapshotStripeFilter(Array.Empty<ulong>()))
        {
            Assert.True(f.ShouldKeep(Ik("k", 4, ValueType.Deletion), null)); // no probe: never the bottom
        }
    }

    [Fact]
    public void KeepsARunOfOperandsAtTheTopOfAStripeAndNeverDropsThemAsDeletions()
    {
        // What CompactionMergeInput leaves when the operator declines a partial merge: the run stays
        // whole; an entry after a non-merge entry of the stripe is shadowed as usual.
        using var f = new SnapshotStripeFilter([3]);
        var probe = new DeeperLevelsProbe(MakeVersion(), 1); // nothing below
        Assert.True(f.ShouldKeep(Ik("k", 9, ValueType.Merge), probe));
        Assert.True(f.ShouldKeep(Ik("k", 8, ValueType.Merge), probe));
        Assert.False(f.ShouldKeep(Ik("k", 7, ValueType.Value), probe));
        Assert.False(f.ShouldKeep(Ik("k", 6, ValueType.Merge), probe));
        Assert.True(f.ShouldKeep(Ik("k", 2, ValueType.Merge), probe)); // the snapshot's stripe: an operand at the bottom stays
        Assert.True(f.ShouldKeep(Ik("m", 9, ValueType.Value), probe));
        Assert.False(f.ShouldKeep(Ik("m", 8, ValueType.Merge), probe));
        Assert.False(f.ShouldKeep(Ik("n", 2, ValueType.Deletion), probe)); // a deletion every snapshot sees, nothing below: dropped
    }

    [Fact]
    public void ProbeChecksEveryDeeperLevelByRange()
    {
        KvEngine.Versions.Version v = MakeVersion(
            (1, File(1, "a", "z", 100)),
            (2, File(2, "c", "e", 100)),
            (3, File(3, "m", "p", 100)));
        var probe = new DeeperLevelsProbe(v, 1); // level 1 itself does not count
        Assert.True(probe.KeyNotExistsBeyondOutputLevel(K("a")));
        Assert.False(probe.KeyNotExistsBeyondOutputLevel(K("d")));
        Assert.False(probe.KeyNotExistsBeyondOutputLevel(K("e")));
        Assert.True(probe.KeyNotExistsBeyondOutputLevel(K("f")));
        Assert.False(probe.KeyNotExistsBeyondOutputLevel(K("n")));
        Assert.True(probe.KeyNotExistsBeyondOutputLevel(K("z")));
        Assert.False(DeeperLevelsProbe.IsBottommost(v, 1, K("a"), K("d")));
        Assert.True(DeeperLevelsProbe.IsBottommost(v, 1, K("f"), K("l")));
        Assert.True(DeeperLevelsProbe.IsBottommost(v, 3, K("a"), K("z")));
    }
}
