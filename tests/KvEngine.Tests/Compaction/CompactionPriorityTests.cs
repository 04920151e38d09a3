using KvEngine.Compaction;
using KvEngine.Db;
using KvEngine.Format;
using KvEngine.Versions;
using KvEngine.Storage;

using static KvEngine.Tests.Compaction.CompactionTestUtil;
using Picked = KvEngine.Compaction.Compaction;
using ValueType = KvEngine.Format.ValueType;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Tests.Compaction;

/// <summary>File choice inside a level: kMinOverlappingRatio (the default) and kRoundRobin with MANIFEST cursors.</summary>
public sealed class CompactionPriorityTests
{
    private const long Mb = 1 << 20;

    private static CompactionOptions Options(CompactionPri pri) => new()
    {
        MaxBytesForLevelBase = 10 * Mb,
        TargetFileSizeBase = 2 * Mb,
        MaxCompactionBytes = 50 * Mb,
        Pri = pri,
    };

    [Fact]
    public void MinOverlappingRatioPicksTheFileWithTheFewestNextLevelBytesPerByte()
    {
        // Level 1 (14 MiB > 10 MiB): A [a,b] 4 MiB over 3 MiB (ratio 768), B [c,d] 2 MiB over 4 MiB (2048),
        // C [e,f] 8 MiB over 2 MiB (256). Level 2's [b,c] file lies under both A and B.
        Version v = MakeVersion((1, File(1, "a", "b", 4 * Mb)), (1, File(2, "c", "d", 2 * Mb)), (1, File(3, "e", "f", 8 * Mb)),
            (2, File(20, "a", "a5", 2 * Mb)), (2, File(21, "b", "c", Mb)), (2, File(22, "c5", "d", 3 * Mb)),
            (2, File(23, "e", "f", 2 * Mb)));
        Assert.Equal(new[] { 2, 0, 1 }, CompactionPicker.MinOverlappingRatioOrder(v.Files(1), v.Files(2)));

        var picker = new CompactionPicker(Options(CompactionPri.MinOverlappingRatio));
        Picked c = picker.Pick(v)!;
        Assert.Equal(new ulong[] { 3 }, Array.ConvertAll(c.StartInputs, f => f.Number));
        Assert.Equal(new ulong[] { 23 }, Array.ConvertAll(c.OutputInputs, f => f.Number));
        Assert.Null(c.CompactCursor); // only round robin keeps cursors

        // C is being compacted: it is skipped, and A (next lowest ratio) comes before B. Level 1
        // without C is 6 MiB (score 0.6), so the picker declines; a 4 MiB target makes it 1.5.
        Assert.Null(picker.Pick(v));
        var busy = new CompactionPicker(Options(CompactionPri.MinOverlappingRatio) with { MaxBytesForLevelBase = 4 * Mb });
        Picked first = busy.Pick(v)!;
        Assert.Equal(3UL, first.StartInputs[0].Number);
        Picked second = busy.Pick(v)!;
        Assert.Equal(new ulong[] { 1 }, Array.ConvertAll(second.StartInputs, f => f.Number));
        Assert.Equal(new ulong[] { 20, 21 }, Array.ConvertAll(second.OutputInputs, f => f.Number));
    }

    [Fact]
    public void EqualRatiosKeepKeyOrder()
    {
        Version v = MakeVersion((1, File(1, "a", "b", Mb)), (1, File(2, "c", "d", Mb)), (1, File(3, "e", "f", Mb)),
            (1, File(4, "g", "h", Mb)), (2, File(20, "e", "e", Mb)));
        Assert.Equal(new[] { 0, 1, 3, 2 }, CompactionPicker.MinOverlappingRatioOrder(v.Files(1), v.Files(2)));
    }

    [Fact]
    public void RoundRobinStartsAfterTheVersionsCursor()
    {
        var builder = new VersionBuilder(MakeVersion((1, File(1, "a", "b", 5 * Mb)), (1, File(2, "c", "d", 5 * Mb)),
            (1, File(3, "e", "f", 5 * Mb))));
        var edit = new VersionEdit();
        edit.AddCompactCursor(1, InternalKeys.Create(K("c5"), 1, ValueType.Value));
        builder.Apply(edit);
        Version v = builder.Build(null);

        var picker = new CompactionPicker(Options(CompactionPri.RoundRobin));
        Picked c = picker.Pick(v)!;
        Assert.Equal(2UL, c.StartInputs[0].Number); // file 2 ends after the cursor "c5"
        Assert.Equal(c.StartInputs[^1].Largest, c.CompactCursor);
        VersionEdit moved = CompactionJob.TrivialMoveEdit(c);
        Assert.Equal((1, c.StartInputs[^1].Largest), Assert.Single(moved.CompactCursors));
    }

    [Fact]
    public void RoundRobinCursorsArePersistedInTheManifest()
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/p");
        KvOptions o = Tiny(fs, autoCompactions: false); // RunCompactionsInline compacts, deterministically
        o.CompactionPri = CompactionPri.RoundRobin;
        var value = new byte[100];
        byte[]?[] before = new byte[Version.NumLevels][];
        using (KvDb db = KvDb.Open("/p/db", o))
        {
            for (int i = 0; i < 3000; i++)
            {
                db.Put(K($"key{i * 7919 % 3000:D5}"), value);
            }
            db.Flush();
            db.Impl.RunCompactionsInline();
            Version v = db.Impl.Versions.Current;
            for (int level = 0; level < Version.NumLevels; level++)
            {
                before[level] = v.CompactCursor(level);
            }
        }
        Assert.Contains(before, c => c != null);
        using (KvDb db = KvDb.Open("/p/db", o))
        {
            Version v = db.Impl.Versions.Current;
            for (int level = 0; level < Version.NumLevels; level++)
            {
                Assert.Equal(before[level], v.CompactCursor(level));
            }
        }
    }
}
