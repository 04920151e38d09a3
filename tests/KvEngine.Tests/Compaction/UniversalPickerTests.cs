using System.Globalization;
using System.Text;
using KvEngine.Compaction;
using KvEngine.Versions;

using static KvEngine.Tests.Compaction.CompactionTestUtil;
using Picked = KvEngine.Compaction.Compaction;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Tests.Compaction;

/// <summary>
/// The universal picker against hand-built sorted-run shapes, as golden cases: a shape lists the
/// files newest first, each <c>L{level}:{smallest}-{largest}/{KiB}</c> (files are numbered from 1
/// in the order written), options override RocksDB's defaults, and the expected pick reads
/// <c>{reason} {level}:{files} ... -> L{output}</c> with <c> trivial</c> / <c> uncompressed</c>
/// when they apply, or <c>none</c>. Each expectation was worked out by hand from RocksDB 7.8's
/// UniversalCompactionBuilder.
/// </summary>
public sealed class UniversalPickerTests
{
    public static TheoryData<string, string, string> GoldenCases() => new()
    {
        // Fewer runs than the trigger: nothing.
        { "", "L0:a-z/10 L0:a-z/10 L6:a-z/40", "none" },
        // Size amp 30/40 < 200%; size ratio merges the three 10s (the 40 is > 30 x 1.01) above level 6.
        { "", "L0:a-z/10 L0:a-z/10 L0:a-z/10 L6:a-z/40", "UniversalSizeRatio 0:1,2,3 -> L5" },
        // Size amp 30/10 >= 200%: everything into the last level.
        { "", "L0:a-z/10 L0:a-z/10 L0:a-z/10 L6:a-z/10", "UniversalSizeAmplification 0:1,2,3 6:4 -> L6" },
        // Size amp at exactly the limit (20/10 = 200%) compacts; just under it does not.
        { "trigger=3", "L0:a-z/10 L0:a-z/10 L6:a-z/10", "UniversalSizeAmplification 0:1,2 6:3 -> L6" },
        { "trigger=3 amp=201", "L0:a-z/10 L0:a-z/10 L6:a-z/10", "UniversalSizeRatio 0:1,2 6:3 -> L6" },
        // A small newest run stops the first series; the next series starts after it.
        { "", "L0:a-z/1 L0:a-z/100 L0:a-z/100 L0:a-z/100 L6:a-z/10000", "UniversalSizeRatio 0:2,3,4 -> L5" },
        // A larger size_ratio lets the small run lead the series.
        { "ratio=10000", "L0:a-z/1 L0:a-z/100 L0:a-z/100 L0:a-z/100 L6:a-z/100000", "UniversalSizeRatio 0:1,2,3,4 -> L5" },
        // max_merge_width caps the series; the next run is a level-0 file, so the output stays in level 0.
        { "max=2", "L0:a-z/10 L0:a-z/10 L0:a-z/10 L6:a-z/40", "UniversalSizeRatio 0:1,2 -> L0" },
        // min_merge_width: two runs qualify, three are required.
        { "", "L0:a-z/10 L0:a-z/10 L0:a-z/40 L6:a-z/1000", "UniversalSizeRatio 0:1,2 -> L0" },
        { "min=3", "L0:a-z/10 L0:a-z/10 L0:a-z/40 L6:a-z/1000", "none" },
        // Stop styles: total size takes the trailing 5; similar size stops there (5 x 1.01 < 10).
        { "", "L0:a-z/10 L0:a-z/10 L0:a-z/5 L6:a-z/1000", "UniversalSizeRatio 0:1,2,3 -> L5" },
        { "stop=similar", "L0:a-z/10 L0:a-z/10 L0:a-z/5 L6:a-z/1000", "UniversalSizeRatio 0:1,2 -> L0" },
        // No series by size: the run count (5 > 4) merges the two newest whatever their sizes.
        { "", "L0:a-z/1 L0:a-z/100 L0:a-z/10000 L0:a-z/1000000 L6:a-z/100000000", "UniversalSortedRunNum 0:1,2 -> L0" },
        // Runs that are levels: inputs span levels 0, 3 and 4 into level 5 (above the next run, level 6).
        { "", "L0:a-z/10 L0:a-z/10 L3:a-m/5 L3:n-z/10 L4:a-z/30 L6:a-z/10000", "UniversalSizeRatio 0:1,2 3:3,4 4:5 -> L5" },
        // The last picked run is level 5 itself: the output level, above level 6.
        { "", "L0:a-z/10 L0:a-z/10 L3:a-z/15 L5:a-z/30 L6:a-z/10000", "UniversalSizeRatio 0:1,2 3:3 5:4 -> L5" },
        // compression_size_percent: the runs older than the pick hold 97% of the data.
        { "csp=50", "L0:a-z/1 L0:a-z/100 L0:a-z/100 L0:a-z/100 L6:a-z/10000", "UniversalSizeRatio 0:2,3,4 -> L5 uncompressed" },
        { "csp=99", "L0:a-z/1 L0:a-z/100 L0:a-z/100 L0:a-z/100 L6:a-z/10000", "UniversalSizeRatio 0:2,3,4 -> L5" },
        // Trivial moves: only when allowed and no two inputs (nor level-0 files) overlap.
        { "trivial", "L0:a-b/10 L0:c-d/10 L0:e-f/10 L6:x-z/40", "UniversalSizeRatio 0:1,2,3 -> L5 trivial" },
        { "trivial", "L0:a-c/10 L0:c-d/10 L0:e-f/10 L6:x-z/40", "UniversalSizeRatio 0:1,2,3 -> L5" },
        { "", "L0:a-b/10 L0:c-d/10 L0:e-f/10 L6:x-z/40", "UniversalSizeRatio 0:1,2,3 -> L5" },
        // A trivial move never goes into level 0.
        { "trivial max=2", "L0:a-b/10 L0:c-d/10 L0:e-f/10 L6:x-z/40", "UniversalSizeRatio 0:1,2 -> L0" },
        // Size amp inputs that do not overlap move too.
        { "trivial", "L0:a-b/10 L0:c-d/10 L0:e-f/10 L6:x-z/10", "UniversalSizeAmplification 0:1,2,3 6:4 -> L6 trivial" },
    };

    [Theory]
    [MemberData(nameof(GoldenCases))]
    public void PicksAsRocksDb(string options, string shape, string expected)
    {
        var picker = new CompactionPicker(Parse(options));
        Version v = Shape(shape);
        Picked? c = picker.Pick(v);
        Assert.Equal(expected, Describe(c));
        if (c == null)
        {
            Assert.False(picker.NeedsCompaction(v)); // "pending" only when something can be picked
        }
    }

    [Fact]
    public void NeedsCompactionIsTrueExactlyWhenAPickExists()
    {
        var picker = new CompactionPicker(Parse(""));
        Assert.False(picker.NeedsCompaction(Shape("L0:a-z/10 L0:a-z/10 L6:a-z/40")));
        Assert.True(picker.NeedsCompaction(Shape("L0:a-z/10 L0:a-z/10 L0:a-z/10 L6:a-z/40")));
        Assert.False(new CompactionPicker(Parse("min=3")).NeedsCompaction(Shape("L0:a-z/10 L0:a-z/10 L0:a-z/40 L6:a-z/1000")));
    }

    [Fact]
    public void ScoreCountsFreeSortedRuns()
    {
        var picker = new CompactionPicker(Parse(""));
        Version v = Shape("L0:a-z/10 L0:a-z/10 L0:a-z/10 L3:a-m/5 L3:n-z/5 L6:a-z/40");
        Assert.Equal(5 / 4.0, picker.ComputeScores(v, LevelTargets.Compute(v, picker.Options))[0]);
        Assert.Equal(5, picker.SortedRuns(v).Count);
        Picked c = picker.Pick(v)!;
        Assert.Equal((5 - RunsIn(c)) / 4.0, picker.ComputeScores(v, LevelTargets.Compute(v, picker.Options))[0]);
    }

    private static int RunsIn(Picked c) =>
        (c.StartLevel == 0 ? c.StartInputs.Length : 1) + c.MiddleInputs.Length + (c.OutputInputs.Length > 0 ? 1 : 0);

    [Fact]
    public void BusyRunsAreSkippedAndBlockSizeAmplification()
    {
        var picker = new CompactionPicker(Parse("max=2"));
        // Sizes that call for size amp: it goes first and takes every run.
        Version v = Shape("L0:a-z/10 L0:a-z/10 L0:a-z/10 L0:a-z/10 L0:a-z/10 L6:a-z/10");
        Picked first = picker.Pick(v)!;
        Assert.Equal(CompactionReason.UniversalSizeAmplification, first.Reason);
        Assert.Null(picker.Pick(v)); // every run is busy
        picker.Release(first);

        // The oldest run busy: no size amp; the newest free runs merge by size ratio instead.
        var second = new CompactionPicker(Parse("max=2"));
        Version w = Shape("L0:a-z/10 L0:a-z/10 L0:a-z/10 L0:a-z/10 L0:a-z/10 L0:a-z/10");
        Picked a = second.Pick(w)!;
        Assert.Equal("UniversalSizeAmplification 0:1,2,3,4,5,6 -> L6", Describe(a));
        second.Release(a);
        Version x = Shape("L0:a-z/10 L0:a-z/10 L0:a-z/10 L0:a-z/10 L3:a-z/10 L6:a-z/100");
        var third = new CompactionPicker(Parse("max=2 amp=1000"));
        Picked b = third.Pick(x)!;
        Assert.Equal("UniversalSizeRatio 0:1,2 -> L0", Describe(b));
        Picked c = third.Pick(x)!; // runs 1 and 2 busy: the series starts after them
        Assert.Equal("UniversalSizeRatio 0:3,4 -> L2", Describe(c));
        Assert.Null(third.Pick(x)); // L3 + L6 (10 vs 100): no series, 2 free runs <= trigger
    }

    [Fact]
    public void PeriodicCompactionMergesFromTheLastBusyRunToTheOldest()
    {
        var clock = new ManualClock();
        ulong now = clock.NowSeconds;
        var picker = new CompactionPicker(Parse("trigger=8") with { PeriodicCompactionSeconds = 3600 }, clock);
        FileMetaData old = File(3, "a", "z", 40 << 10);
        old.FileCreationTime = now - 7200;
        FileMetaData young0 = File(1, "a", "z", 10 << 10, seq: 100);
        young0.FileCreationTime = now;
        FileMetaData young1 = File(2, "a", "z", 10 << 10, seq: 99);
        young1.FileCreationTime = now;
        Version v = MakeVersion((0, young0), (0, young1), (6, old));
        Picked c = picker.Pick(v)!;
        Assert.Equal("PeriodicCompaction 0:1,2 6:3 -> L6", Describe(c));
        Assert.False(c.IsTrivialMove);
        picker.Release(c);

        // Every file young: nothing (two runs, below the trigger).
        old.FileCreationTime = now - 10;
        Assert.Null(picker.Pick(v));
        Assert.False(picker.NeedsCompaction(v));
    }

    [Fact]
    public void PeriodicCompactionOfTheOldestRunAloneNeedsADueFileInIt()
    {
        var clock = new ManualClock();
        ulong t = clock.NowSeconds;
        var picker = new CompactionPicker(Parse("trigger=3 max=2 amp=100000") with { PeriodicCompactionSeconds = 3600 }, clock);
        FileMetaData f1 = File(1, "a", "z", 1 << 10, seq: 100);
        FileMetaData f2 = File(2, "a", "z", 100 << 10, seq: 99);
        FileMetaData f3 = File(3, "a", "z", 100 << 10, seq: 98);
        FileMetaData f4 = File(4, "a", "z", 100000 << 10);
        f1.FileCreationTime = f2.FileCreationTime = f3.FileCreationTime = t;
        f4.FileCreationTime = t + 7200;
        Version v = MakeVersion((0, f1), (0, f2), (0, f3), (6, f4));
        Picked ratio = picker.Pick(v)!; // nothing is due yet: size ratio takes runs 2 and 3
        Assert.Equal("UniversalSizeRatio 0:2,3 -> L5", Describe(ratio));

        clock.Advance(TimeSpan.FromHours(2) + TimeSpan.FromSeconds(1));
        // File 1 is due, but the only runs after the busy ones is the oldest, which holds no due file.
        Assert.Null(picker.Pick(v));
        f4.FileCreationTime = t;
        Assert.Equal("PeriodicCompaction 6:4 -> L6", Describe(picker.Pick(v))); // rewritten in place
    }

    [Fact]
    public void DynamicLevelBytesIsOffUnderUniversalAsRocksDbSanitizesIt()
    {
        var o = new ColumnFamilyOptions { CompactionStyle = CompactionStyle.Universal, LevelCompactionDynamicLevelBytes = true };
        Assert.False(CompactionOptions.From(o).LevelCompactionDynamicLevelBytes);
        o.CompactionStyle = CompactionStyle.Level;
        Assert.True(CompactionOptions.From(o).LevelCompactionDynamicLevelBytes);
    }

    [Fact]
    public void ManualCompactionTakesEveryFileIntoTheLastLevel()
    {
        var picker = new CompactionPicker(Parse("trivial"));
        Version v = Shape("L0:a-b/10 L0:c-d/10 L4:e-f/10 L6:x-z/40");
        Assert.Equal(ManualPickResult.Picked, picker.PickUniversalManual(v, out Picked? c));
        Assert.Equal("ManualCompaction 0:1,2 4:3 6:4 -> L6", Describe(c)); // never a trivial move
        Assert.Equal(ManualPickResult.Conflict, picker.PickUniversalManual(v, out _));
        picker.Release(c!);
        Assert.Equal(ManualPickResult.NothingToDo, picker.PickUniversalManual(MakeVersion(), out _));
    }

    private static CompactionOptions Parse(string options)
    {
        var u = new CompactionOptionsUniversal();
        int trigger = 4;
        foreach (string token in options.Split(' ', StringSplitOptions.RemoveEmptyEntries))
        {
            string[] kv = token.Split('=');
            int n = kv.Length > 1 && kv[1] != "similar" ? int.Parse(kv[1], CultureInfo.InvariantCulture) : 0;
            switch (kv[0])
            {
                case "trigger": trigger = n; break;
                case "ratio": u.SizeRatio = n; break;
                case "min": u.MinMergeWidth = n; break;
                case "max": u.MaxMergeWidth = n; break;
                case "amp": u.MaxSizeAmplificationPercent = n; break;
                case "csp": u.CompressionSizePercent = n; break;
                case "stop": u.StopStyle = CompactionStopStyle.SimilarSize; break;
                case "trivial": u.AllowTrivialMove = true; break;
                default: throw new ArgumentException(token);
            }
        }
        return new CompactionOptions
        {
            Style = CompactionStyle.Universal,
            Level0FileNumCompactionTrigger = trigger,
            TargetFileSizeBase = 2 << 20,
            Universal = u,
        };
    }

    private static Version Shape(string shape)
    {
        var files = new List<(int, FileMetaData)>();
        ulong number = 1;
        foreach (string token in shape.Split(' ', StringSplitOptions.RemoveEmptyEntries))
        {
            int level = token[1] - '0';
            string[] parts = token[3..].Split('/');
            string[] range = parts[0].Split('-');
            long size = long.Parse(parts[1], CultureInfo.InvariantCulture) << 10;
            // Level-0 files newest first: the first written gets the largest sequence.
            ulong seq = level == 0 ? 1000 - number : 1;
            files.Add((level, File(number, range[0], range[1], size, seq)));
            number++;
        }
        return MakeVersion(files.ToArray());
    }

    private static string Describe(Picked? c)
    {
        if (c == null)
        {
            return "none";
        }
        var sb = new StringBuilder(c.Reason.ToString());
        Append(sb, c.StartLevel, c.StartInputs);
        foreach (CompactionInputLevel middle in c.MiddleInputs)
        {
            Append(sb, middle.Level, middle.Files);
        }
        if (c.OutputLevel != c.StartLevel)
        {
            Append(sb, c.OutputLevel, c.OutputInputs);
        }
        sb.Append(" -> L").Append(c.OutputLevel);
        if (c.IsTrivialMove)
        {
            sb.Append(" trivial");
        }
        if (c.DisableCompression)
        {
            sb.Append(" uncompressed");
        }
        return sb.ToString();
    }

    private static void Append(StringBuilder sb, int level, FileMetaData[] files)
    {
        if (files.Length == 0)
        {
            return;
        }
        sb.Append(' ').Append(level).Append(':').AppendJoin(',', Array.ConvertAll(files, f => f.Number));
    }
}
