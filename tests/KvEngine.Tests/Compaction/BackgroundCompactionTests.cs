using System.Text.RegularExpressions;
using KvEngine.Storage;

using static KvEngine.Tests.Compaction.CompactionTestUtil;

namespace KvEngine.Tests.Compaction;

/// <summary>Background scheduling, write stalls, the auto-compaction switch and the statistics properties.</summary>
public sealed partial class BackgroundCompactionTests
{
    private readonly FaultInjectionFileSystem _fs = new();
    private readonly Xunit.Abstractions.ITestOutputHelper _out;

    public BackgroundCompactionTests(Xunit.Abstractions.ITestOutputHelper output)
    {
        _out = output;
        _fs.CreateDirectory("/b");
    }

    [Fact]
    public void WritersSlowDownAndStopButNeverFail()
    {
        KvOptions o = Tiny(_fs);
        o.Level0SlowdownWritesTrigger = 2;
        o.Level0StopWritesTrigger = 3;
        o.MaxBackgroundJobs = 1;
        using KvDb db = KvDb.Open("/b/db", o);
        var value = new byte[100];
        for (int i = 0; i < 4000; i++)
        {
            db.Put(K($"key{i % 1000:D4}"), value);
        }
        Assert.True(db.Counters.StallMicros > 0, "no write was delayed");
        db.Flush();
        for (int i = 0; i < 1000; i++)
        {
            Assert.NotNull(db.Get(K($"key{i:D4}")));
        }
    }

    [Fact]
    public void DisabledAutoCompactionLetsLevel0GrowUntilCompactRange()
    {
        KvOptions o = Tiny(_fs, autoCompactions: false);
        o.Level0StopWritesTrigger = 4;
        o.Level0SlowdownWritesTrigger = 3;
        using KvDb db = KvDb.Open("/b/db", o);
        for (int f = 0; f < 6; f++)
        {
            db.Put(K($"key{f}"), K("v"));
            db.Flush();
        }
        Assert.Equal(6, Files(db, 0)); // beyond the stop trigger, and writes went on
        Assert.Equal("1", db.GetProperty("rocksdb.compaction-pending"));
        Assert.Equal(0, db.Counters.Compactions);
        db.CompactRange(null, null);
        Assert.Equal(0, Files(db, 0));
        Assert.Equal("0", db.GetProperty("rocksdb.compaction-pending"));
        Assert.Equal("0", db.GetProperty("rocksdb.num-running-compactions"));
    }

    [Fact]
    public void StatsReportPerLevelAndCumulativeCompaction()
    {
        using KvDb db = KvDb.Open("/b/db", Tiny(_fs, autoCompactions: false));
        var value = new byte[200];
        new Random(3).NextBytes(value);
        for (int i = 0; i < 400; i++)
        {
            db.Put(K($"key{i:D4}"), value);
            if (i % 100 == 99)
            {
                db.Flush();
            }
        }
        db.CompactRange(null, null);
        string stats = db.GetProperty("rocksdb.stats")!;
        _out.WriteLine(stats);
        Assert.Contains("** Compaction Stats [default] **", stats, StringComparison.Ordinal);
        Assert.Matches(LevelRow(), stats);
        Assert.Matches(CumulativeLine(), stats);
        Assert.Contains(" Sum ", stats, StringComparison.Ordinal);
        Assert.True(db.Counters.CompactReadBytes > 0 && db.Counters.CompactWriteBytes > 0);
        Assert.True(db.Counters.FlushWriteBytes > 0);
        Assert.Equal(db.Counters.CompactReadBytes, db.Impl.CompactionStats.Level(1).BytesReadNonOutput);
        Assert.Contains("rocksdb.compact.write.bytes", db.Counters.ToList().Select(e => e.Key));
    }

    [GeneratedRegex(@"\n  L1 +\d+/0 +[\d.]+ (KB|MB|B) +[\d.]+ ")]
    private static partial Regex LevelRow();

    [GeneratedRegex(@"Cumulative compaction: [\d.]+ GB write, [\d.]+ MB/s write, [\d.]+ GB read, [\d.]+ MB/s read, [\d.]+ seconds")]
    private static partial Regex CumulativeLine();
}
