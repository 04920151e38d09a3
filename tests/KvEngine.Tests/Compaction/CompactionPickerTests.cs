using KvEngine.Compaction;
using KvEngine.Format;
using KvEngine.Versions;

using static KvEngine.Tests.Compaction.CompactionTestUtil;
using ValueType = KvEngine.Format.ValueType;
using Picked = KvEngine.Compaction.Compaction;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Tests.Compaction;

/// <summary>Level scores, file choice, clean cuts, expansion and trivial moves on synthetic versions.</summary>
public sealed class CompactionPickerTests
{
    private const long Mb = 1 << 20;

    private static CompactionOptions Options(bool dynamic = false) => new()
    {
        Level0FileNumCompactionTrigger = 4,
        MaxBytesForLevelBase = 10 * Mb,
        MaxBytesForLevelMultiplier = 10,
        TargetFileSizeBase = 2 * Mb,
        MaxCompactionBytes = 50 * Mb,
        LevelCompactionDynamicLevelBytes = dynamic,
    };

    private static ulong[] Numbers(FileMetaData[] files) => Array.ConvertAll(files, f => f.Number);

    [Fact]
    public void Level0CompactsAllItsFilesOnceTheTriggerIsReached()
    {
        var picker = new CompactionPicker(Options());
        Version three = MakeVersion((0, File(1, "a", "m", Mb, 1)), (0, File(2, "c", "d", Mb, 2)), (0, File(3, "x", "z", Mb, 3)),
            (1, File(10, "b", "c", Mb)), (1, File(11, "n", "o", Mb)), (1, File(12, "y", "z", Mb)));
        Assert.Equal(0.75, picker.ComputeScores(three, LevelTargets.Compute(three, Options()))[0]);
        Assert.Null(picker.Pick(three));

        Version four = MakeVersion((0, File(1, "a", "m", Mb, 1)), (0, File(2, "c", "d", Mb, 2)), (0, File(3, "x", "z", Mb, 3)),
            (0, File(4, "e", "f", Mb, 4)), (1, File(10, "b", "c", Mb)), (1, File(11, "n", "o", Mb)), (1, File(12, "y", "z", Mb)));
        Picked? c = picker.Pick(four);
        Assert.NotNull(c);
        Assert.Equal(0, c.StartLevel);
        Assert.Equal(1, c.OutputLevel);
        Assert.Equal(new ulong[] { 4, 3, 2, 1 }, Numbers(c.StartInputs));
        Assert.Equal(new ulong[] { 10, 11, 12 }, Numbers(c.OutputInputs)); // [a,z] overlaps all of level 1
        Assert.False(c.IsTrivialMove);
        Assert.Equal(1, picker.RunningCount);
        Assert.Null(picker.Pick(four)); // its files are being compacted
        picker.Release(c);
        Assert.NotNull(picker.Pick(four));
    }

    [Fact]
    public void RunningCompactionOutputRangeIsReportedForItsOutputLevelOnly()
    {
        // What ingestion asks before placing a file in a level (RocksDB's RangeOverlapWithCompaction).
        var picker = new CompactionPicker(Options());
        Version v = MakeVersion((0, File(1, "c", "f", Mb, 1)), (0, File(2, "d", "e", Mb, 2)), (0, File(3, "c", "d", Mb, 3)),
            (0, File(4, "e", "h", Mb, 4)), (1, File(10, "g", "j", Mb)), (1, File(11, "x", "z", Mb)));
        Picked c = picker.Pick(v)!;
        Assert.Equal(1, c.OutputLevel); // inputs cover [c, j]
        Assert.True(picker.RangeOverlapsRunningOutput(1, K("a"), K("c")));
        Assert.True(picker.RangeOverlapsRunningOutput(1, K("i"), K("k")));
        Assert.False(picker.RangeOverlapsRunningOutput(1, K("k"), K("w")));
        Assert.False(picker.RangeOverlapsRunningOutput(2, K("a"), K("z")));
        picker.Release(c);
        Assert.False(picker.RangeOverlapsRunningOutput(1, K("a"), K("z")));
    }

    [Fact]
    public void BottommostCompressionForbidsTrivialMovesIntoTheBottommostLevelOnly()
    {
        // Level 1 at 15 MiB > 10 MiB; nothing under [a,b] in level 2: a trivial move when codecs agree.
        Version intoBottom = MakeVersion((1, File(1, "a", "b", 5 * Mb)), (1, File(2, "c", "d", 5 * Mb)), (1, File(3, "e", "f", 5 * Mb)),
            (2, File(20, "c", "c5", Mb)));
        var same = new CompactionPicker(Options() with { Pri = CompactionPri.RoundRobin });
        Assert.True(same.Pick(intoBottom)!.IsTrivialMove);
        // Level 2 is the deepest non-empty level, so level 1 -> 2 writes the bottommost codec: rewrite.
        var differs = new CompactionPicker(Options() with { Pri = CompactionPri.RoundRobin, BottommostCompressionDiffers = true });
        Picked rewrite = differs.Pick(intoBottom)!;
        Assert.Equal(new ulong[] { 1 }, Numbers(rewrite.StartInputs));
        Assert.Empty(rewrite.OutputInputs);
        Assert.False(rewrite.IsTrivialMove);
        // With level 3 holding data, level 2 is not bottommost: 1 -> 2 moves as before.
        Version aboveBottom = MakeVersion((1, File(1, "a", "b", 5 * Mb)), (1, File(2, "c", "d", 5 * Mb)), (1, File(3, "e", "f", 5 * Mb)),
            (2, File(20, "c", "c5", Mb)), (3, File(30, "a", "z", Mb)));
        var differs2 = new CompactionPicker(Options() with { Pri = CompactionPri.RoundRobin, BottommostCompressionDiffers = true });
        Assert.True(differs2.Pick(aboveBottom)!.IsTrivialMove);
    }

    [Fact]
    public void OversizedLevelPicksRoundRobinWithNextLevelOverlap()
    {
        var picker = new CompactionPicker(Options() with { Pri = CompactionPri.RoundRobin });
        // Level 1: 15 MiB > 10 MiB target. Level 2 holds [c,d] under the second file.
        Version v = MakeVersion((1, File(1, "a", "b", 5 * Mb)), (1, File(2, "c", "d", 5 * Mb)), (1, File(3, "e", "f", 5 * Mb)),
            (2, File(20, "c", "c5", Mb)), (3, File(30, "a", "z", Mb)));
        double[] scores = picker.ComputeScores(v, LevelTargets.Compute(v, Options()));
        Assert.Equal(1.5, scores[1], 3);

        Picked c1 = picker.Pick(v)!;
        Assert.Equal(new ulong[] { 1 }, Numbers(c1.StartInputs));
        Assert.True(c1.IsTrivialMove); // nothing in level 2 under [a,b]; grandparent overlap 1 MiB
        Assert.Equal(new ulong[] { 30 }, Numbers(c1.Grandparents));
        picker.Release(c1);

        Picked c2 = picker.Pick(v)!; // the compact pointer moved past file 1
        Assert.Equal(new ulong[] { 2 }, Numbers(c2.StartInputs));
        Assert.Equal(new ulong[] { 20 }, Numbers(c2.OutputInputs));
        Assert.False(c2.IsTrivialMove);

        Picked c3 = picker.Pick(v)!; // file 2 is busy (and not counted: 10 MiB left, score 1): the next one
        Assert.Equal(new ulong[] { 3 }, Numbers(c3.StartInputs));
        picker.Release(c2);
        picker.Release(c3);
        Assert.Equal(new ulong[] { 1 }, Numbers(picker.Pick(v)!.StartInputs)); // wrapped around
    }

    [Fact]
    public void InputsAreCutCleanlyBetweenUserKeys()
    {
        var picker = new CompactionPicker(Options());
        // Files 1 and 2 of level 1 share the user key "c" (different sequence numbers).
        var f1 = new FileMetaData
        {
            Number = 1, FileSize = (ulong)(6 * Mb),
            Smallest = InternalKeys.Create(K("a"), 9, ValueType.Value), Largest = InternalKeys.Create(K("c"), 9, ValueType.Value),
        };
        var f2 = new FileMetaData
        {
            Number = 2, FileSize = (ulong)(6 * Mb),
            Smallest = InternalKeys.Create(K("c"), 5, ValueType.Value), Largest = InternalKeys.Create(K("e"), 5, ValueType.Value),
        };
        Version v = MakeVersion((1, f1), (1, f2), (1, File(3, "g", "h", Mb)));
        Picked c = picker.Pick(v)!;
        Assert.Equal(new ulong[] { 1, 2 }, Numbers(c.StartInputs));
        Assert.False(c.IsTrivialMove);
    }

    [Fact]
    public void StartLevelGrowsWhenTheOutputLevelOverlapStaysTheSame()
    {
        // Round robin starts at file 1 (the minimum overlapping ratio would take file 3: no overlap).
        var picker = new CompactionPicker(Options() with { Pri = CompactionPri.RoundRobin });
        Version v = MakeVersion((1, File(1, "a", "b", 6 * Mb)), (1, File(2, "c", "d", 6 * Mb)), (1, File(3, "x", "y", Mb)),
            (2, File(20, "a", "e", Mb)));
        Picked c = picker.Pick(v)!;
        Assert.Equal(new ulong[] { 1, 2 }, Numbers(c.StartInputs));
        Assert.Equal(new ulong[] { 20 }, Numbers(c.OutputInputs));

        // Not when the total would reach MaxCompactionBytes.
        var small = new CompactionPicker(Options() with { MaxCompactionBytes = 10 * Mb, Pri = CompactionPri.RoundRobin });
        Picked c2 = small.Pick(v)!;
        Assert.Equal(new ulong[] { 1 }, Numbers(c2.StartInputs));
    }

    [Fact]
    public void ManualPicksFilesInRangeChunkedByMaxCompactionBytes()
    {
        var picker = new CompactionPicker(Options() with { MaxCompactionBytes = 5 * Mb });
        Version v = MakeVersion((1, File(1, "a", "b", 3 * Mb)), (1, File(2, "c", "d", 3 * Mb)), (1, File(3, "e", "f", 3 * Mb)),
            (1, File(4, "x", "y", 3 * Mb)));
        Assert.Equal(ManualPickResult.Picked, picker.PickManual(v, 1, 2, K("b"), K("e"), null, out Picked? c));
        Assert.Equal(new ulong[] { 1, 2 }, Numbers(c!.StartInputs)); // 3 + 3 MiB reaches the 5 MiB limit
        Assert.Equal(ManualPickResult.Conflict, picker.PickManual(v, 1, 2, K("a"), K("b"), null, out _));
        Assert.Equal(ManualPickResult.Picked, picker.PickManual(v, 1, 2, K("b"), K("e"), K("d"), out Picked? next));
        Assert.Equal(new ulong[] { 3 }, Numbers(next!.StartInputs));
        Assert.Equal(ManualPickResult.NothingToDo, picker.PickManual(v, 1, 2, K("b"), K("e"), K("f"), out _));
    }

    [Fact]
    public void RunningCompactionsDoNotWriteOverlappingRangesOfOneLevel()
    {
        var picker = new CompactionPicker(Options() with { Level0FileNumCompactionTrigger = 1 });
        Version v = MakeVersion((0, File(1, "a", "z", Mb, 5)), (1, File(10, "a", "b", 6 * Mb)), (1, File(11, "x", "y", 6 * Mb)));
        Assert.Equal(ManualPickResult.Picked, picker.PickManual(v, 1, 2, K("a"), K("b"), null, out _));
        // Level 0 -> 1 must take file 10, which is busy: it waits.
        Picked? c = picker.Pick(v);
        Assert.True(c == null || c.StartLevel != 0);
    }

    [Fact]
    public void StaticAndDynamicLevelTargets()
    {
        Version v = MakeVersion((5, File(1, "a", "b", 900 * Mb)), (6, File(2, "a", "b", 5000 * Mb)));
        LevelTargets s = LevelTargets.Compute(v, Options());
        Assert.Equal(1, s.BaseLevel);
        Assert.Equal(10 * Mb, s.MaxBytesForLevel(1));
        Assert.Equal(100 * Mb, s.MaxBytesForLevel(2));
        Assert.Equal(10000 * Mb, s.MaxBytesForLevel(4));

        // Dynamic: the largest level (5000 MiB) sets the shape: 500 at L5, 50 at L4, 5 at L3, which is
        // within [base / multiplier, base]: L3 is the base level, its target raised to the 10 MiB floor.
        LevelTargets d = LevelTargets.Compute(v, Options(dynamic: true));
        Assert.Equal(3, d.BaseLevel);
        Assert.Equal(long.MaxValue, d.MaxBytesForLevel(2));
        Assert.Equal(10 * Mb, d.MaxBytesForLevel(3));
        Assert.Equal(50 * Mb, d.MaxBytesForLevel(4));
        Assert.Equal(5000 * Mb, d.MaxBytesForLevel(6));

        LevelTargets empty = LevelTargets.Compute(MakeVersion(), Options(dynamic: true));
        Assert.Equal(Version.NumLevels - 1, empty.BaseLevel);
    }
}
