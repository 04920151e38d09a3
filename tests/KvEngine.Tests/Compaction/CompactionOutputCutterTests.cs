using KvEngine.Compaction;
using KvEngine.Versions;

using static KvEngine.Tests.Compaction.CompactionTestUtil;

namespace KvEngine.Tests.Compaction;

/// <summary>The output-cutting rules of PR 10655, driven with synthetic grandparent files.</summary>
public sealed class CompactionOutputCutterTests
{
    private const long Target = 1000; // (target + 99) / 100 = 10, so the pre-cut size is 10 x (50 + 5 x boundaries)

    // Grandparents: [b,c] 300  [e,f] 300  [h,i] 50  [k,l] 300
    private static readonly FileMetaData[] s_gp =
    {
        File(10, "b", "c", 300), File(11, "e", "f", 300), File(12, "h", "i", 50), File(13, "k", "l", 300),
    };

    private static CompactionOutputCutter Cutter(bool dynamic = true, long maxCompactionBytes = 25 * Target, bool bottommost = false,
        FileMetaData[]? gp = null) =>
        new(gp ?? s_gp, Target, maxCompactionBytes, dynamic, bottommost);

    [Fact]
    public void MaxSizeIsTwiceTheTargetOnlyWhenAligningAboveTheBottom()
    {
        Assert.Equal(2 * Target, Cutter().MaxOutputFileSize);
        Assert.Equal(Target, Cutter(dynamic: false).MaxOutputFileSize);
        Assert.Equal(Target, Cutter(bottommost: true).MaxOutputFileSize);
        Assert.Equal(Target, Cutter(gp: Array.Empty<FileMetaData>()).MaxOutputFileSize);

        CompactionOutputCutter c = Cutter();
        Assert.False(c.ShouldStopBefore(K("b1"), false, 0));
        Assert.False(c.ShouldStopBefore(K("b2"), true, 1999)); // no boundary crossed, below 2x
        Assert.True(c.ShouldStopBefore(K("b3"), true, 2000));

        CompactionOutputCutter off = Cutter(dynamic: false);
        off.ShouldStopBefore(K("b1"), false, 0);
        Assert.False(off.ShouldStopBefore(K("b2"), true, 999));
        Assert.True(off.ShouldStopBefore(K("b3"), true, 1000));
    }

    [Fact]
    public void PreCutsAtABoundaryOnceHalfTheTargetPlusFivePercentPerBoundary()
    {
        CompactionOutputCutter c = Cutter();
        c.ShouldStopBefore(K("b1"), false, 0);
        Assert.Equal(300, c.OverlappedBytes);
        Assert.False(c.ShouldStopBefore(K("c5"), true, 549)); // 1 boundary: threshold 550
        CompactionOutputCutter c2 = Cutter();
        c2.ShouldStopBefore(K("b1"), false, 0);
        Assert.True(c2.ShouldStopBefore(K("c5"), true, 550));
        Assert.Equal(0, c2.OverlappedBytes); // reset to the new key's overlap: a gap

        // Without a boundary crossing there is no pre-cut, whatever the size below the maximum.
        CompactionOutputCutter c3 = Cutter();
        c3.ShouldStopBefore(K("b1"), false, 0);
        Assert.False(c3.ShouldStopBefore(K("b2"), true, 1500));
    }

    [Fact]
    public void PreCutThresholdGrowsWithBoundariesSeen()
    {
        CompactionOutputCutter c = Cutter();
        c.ShouldStopBefore(K("a"), false, 0);
        Assert.False(c.ShouldStopBefore(K("b1"), true, 10));  // enters [b,c]: 1 boundary, 10 < 550
        Assert.False(c.ShouldStopBefore(K("d"), true, 20));   // leaves it: 2 boundaries, 20 < 600
        Assert.False(c.ShouldStopBefore(K("e1"), true, 640)); // enters [e,f]: 3 boundaries, 640 < 650
        Assert.True(c.ShouldStopBefore(K("g"), true, 700));   // 4 boundaries: 700 >= 700
    }

    [Fact]
    public void CutsBeforeSkippingAWholeLargeGrandparentFile()
    {
        CompactionOutputCutter c = Cutter();
        c.ShouldStopBefore(K("a"), false, 0);
        // "a" -> "d" jumps over all of [b,c] (300 > target / 8): cut although the output is tiny.
        Assert.True(c.ShouldStopBefore(K("d"), true, 1));
        Assert.Equal(0, c.OverlappedBytes);

        // Skipping the small [h,i] (50 <= 125) does not cut.
        CompactionOutputCutter small = Cutter();
        small.ShouldStopBefore(K("g"), false, 0);
        Assert.False(small.ShouldStopBefore(K("j"), true, 1));

        // Landing inside a file needs three boundaries: gap -> [e,f] start crosses only one.
        CompactionOutputCutter inside = Cutter();
        inside.ShouldStopBefore(K("d"), false, 0);
        Assert.False(inside.ShouldStopBefore(K("e1"), true, 1));
        // [e,f] end, [h,i] start and end, [k,l] start: 4 boundaries ending inside a file, 350 new bytes.
        Assert.True(inside.ShouldStopBefore(K("k1"), true, 2));
    }

    [Fact]
    public void CutsWhenOverlapPlusSizeExceedsMaxCompactionBytes()
    {
        CompactionOutputCutter c = Cutter(maxCompactionBytes: 700);
        c.ShouldStopBefore(K("b1"), false, 0);
        // Crossing into [e,f]: overlap 600 + 450 > 700.
        Assert.True(c.ShouldStopBefore(K("e1"), true, 450));
        Assert.Equal(300, c.OverlappedBytes); // the new output starts inside [e,f]

        // The same rule holds with alignment off (it predates PR 10655); the others do not.
        CompactionOutputCutter off = Cutter(dynamic: false, maxCompactionBytes: 700);
        off.ShouldStopBefore(K("b1"), false, 0);
        Assert.True(off.ShouldStopBefore(K("e1"), true, 450));
        CompactionOutputCutter off2 = Cutter(dynamic: false);
        off2.ShouldStopBefore(K("a"), false, 0);
        Assert.False(off2.ShouldStopBefore(K("d"), true, 1));     // no skip rule
        Assert.False(off2.ShouldStopBefore(K("e1"), true, 900));  // no pre-cut
    }

    [Fact]
    public void EachCutCountsItsRule()
    {
        CompactionOutputCutter c = Cutter(maxCompactionBytes: 700);
        c.ShouldStopBefore(K("a"), false, 0);
        Assert.True(c.ShouldStopBefore(K("d"), true, 1));      // skips all of [b,c]
        Assert.True(c.ShouldStopBefore(K("e1"), true, 2000));  // maximum size (checked first)
        Assert.True(c.ShouldStopBefore(K("g"), true, 450));    // leaves [e,f]: overlap 300 + 450 > 700
        Assert.False(c.ShouldStopBefore(K("h1"), true, 10));   // enters [h,i]: 1 boundary, 10 < 550
        Assert.True(c.ShouldStopBefore(K("j"), true, 600));    // leaves it: 2 boundaries, 600 >= 600
        Assert.Equal(new long[] { 1, 1, 1, 1 }, c.Cuts);
    }

    [Fact]
    public void KeyEqualToAFileEndStaysInTheLastFileHoldingIt()
    {
        // [b,c] and [c,d] share the user key c: at "c" the walk points at the later file.
        FileMetaData[] gp = { File(20, "b", "c", 300), File(21, "c", "d", 400) };
        CompactionOutputCutter c = Cutter(gp: gp);
        c.ShouldStopBefore(K("c"), false, 0);
        Assert.Equal(700, c.OverlappedBytes); // c overlaps both files
    }

    [Fact]
    public void NoGrandparentsCutsOnlyAtTheTarget()
    {
        CompactionOutputCutter c = Cutter(gp: Array.Empty<FileMetaData>());
        c.ShouldStopBefore(K("a"), false, 0);
        Assert.False(c.ShouldStopBefore(K("m"), true, 999));
        Assert.True(c.ShouldStopBefore(K("z"), true, 1000));
    }
}
