using KvEngine.Compaction;
using KvEngine.Storage;
using KvEngine.Versions;

using static KvEngine.Tests.Compaction.CompactionTestUtil;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Tests.Compaction;

/// <summary>
/// TTL and periodic compaction (RocksDB 7.8's ttl and periodic_compaction_seconds): files are
/// picked by the age their metadata records, read from an injected clock, so the tests age files
/// without waiting; the defaults resolve as RocksDB's SanitizeOptions does.
/// </summary>
public sealed class TtlCompactionTests
{
    private const long Day = 24 * 3600;
    private readonly FaultInjectionFileSystem _fs = new();
    private readonly ManualClock _clock = new();

    public TtlCompactionTests() => _fs.CreateDirectory("/t");

    private KvOptions Options(KvCompactionFilter? filter = null) => new()
    {
        FileSystem = _fs,
        TimeProvider = _clock,
        WriteBufferSize = 64 << 10,
        BlockSize = 1024,
        Level0FileNumCompactionTrigger = 4,
        DisableAutoCompactions = true, // the test runs the picks itself
        CompactionFilter = filter,
    };

    public static TheoryData<CompactionStyle, long?, long?, bool, ulong, ulong> SanitizeCases() => new()
    {
        // style, ttl, periodic, filter -> resolved ttl, periodic (RocksDB 7.8's column_family.cc SanitizeOptions)
        { CompactionStyle.Level, null, null, false, 30 * Day, 0 },
        { CompactionStyle.Level, null, null, true, 30 * Day, 30 * Day },
        { CompactionStyle.Level, 0, null, true, 0, 30 * Day },
        { CompactionStyle.Level, 100, 0, true, 100, 0 },
        { CompactionStyle.Level, 100, 50, false, 100, 50 },
        { CompactionStyle.Fifo, null, null, false, 30 * Day, 30 * Day },
        { CompactionStyle.Fifo, null, 0, false, 0, 0 },
        { CompactionStyle.Fifo, 100, 50, false, 50, 50 },
        { CompactionStyle.Fifo, 100, null, true, 100, 0 },
        { CompactionStyle.Universal, null, null, false, 30 * Day, 30 * Day },
        { CompactionStyle.Universal, 100, 500, false, 100, 100 },
        { CompactionStyle.Universal, 0, null, false, 0, 0 },
        { CompactionStyle.Universal, 0, null, true, 0, 30 * Day },
    };

    [Theory]
    [MemberData(nameof(SanitizeCases))]
    public void DefaultsResolveAsRocksDbSanitizeOptions(CompactionStyle style, long? ttl, long? periodic, bool filter,
        ulong expectedTtl, ulong expectedPeriodic)
    {
        Assert.Equal((expectedTtl, expectedPeriodic), CompactionOptions.ResolveTimes(style, ttl, periodic, filter));
    }

    private void WriteFile(KvDb db, string prefix, char valueMark, int keys = 20)
    {
        for (int i = 0; i < keys; i++)
        {
            db.Put(K($"{prefix}{i:D3}"), K($"{valueMark}value{i}"));
        }
        db.Flush();
    }

    [Fact]
    public void FilesAndTablePropertiesRecordTheClocksTimes()
    {
        using KvDb db = KvDb.Open("/t/db", Options());
        ulong t0 = _clock.NowSeconds;
        WriteFile(db, "a", 'v');
        _clock.Advance(TimeSpan.FromHours(5));
        ulong t1 = _clock.NowSeconds;
        WriteFile(db, "a", 'w');
        _clock.Advance(TimeSpan.FromHours(5));
        ulong t2 = _clock.NowSeconds;
        db.CompactRange(null, null);
        FileMetaData f = Assert.Single(db.Impl.Versions.Current.Files(1));
        Assert.Equal(t0, f.OldestAncesterTime); // the oldest input's flush time
        Assert.Equal(t2, f.FileCreationTime);
        string path = FileNames.TableFile("/t/db", f.Number);
        using var reader = KvEngine.Table.TableReader.Open(_fs.OpenRandomAccess(path), (long)f.FileSize, new KvEngine.Table.TableOptions(), path);
        KvEngine.Table.TableProperties p = reader.Properties;
        Assert.Equal(t0, p.CreationTime); // RocksDB: creation_time = oldest ancester time
        Assert.Equal(t2, p.FileCreationTime);
        Assert.NotEqual(t1, t2);
    }

    [Fact]
    public void LeveledTtlPushesExpiredFilesDownToTheDeepestNonEmptyLevel()
    {
        KvOptions o = Options();
        o.Ttl = 10 * Day;
        using KvDb db = KvDb.Open("/t/db", o);
        WriteFile(db, "b", 'v');
        db.CompactRange(null, null);
        db.Impl.CompactLevel(1, 2, null, null); // the deepest level: 2
        WriteFile(db, "a", 'v'); // another key range, in level 0
        Assert.Equal(0, db.Impl.RunCompactionsInline()); // nothing is due by size or age
        Assert.Equal("0", db.GetProperty("rocksdb.compaction-pending"));

        _clock.Advance(TimeSpan.FromDays(10) + TimeSpan.FromSeconds(2));
        Assert.Equal("1", db.GetProperty("rocksdb.compaction-pending"));
        long movesBefore = db.Counters.TrivialMoves;
        // Level 0 into level 1, then level 1 into level 2 (both trivial moves: nothing overlaps).
        Assert.Equal(2, db.Impl.RunCompactionsInline());
        Assert.Equal(movesBefore + 2, db.Counters.TrivialMoves);
        Version v = db.Impl.Versions.Current;
        Assert.Equal(0, v.NumFiles(0));
        Assert.Equal(0, v.NumFiles(1));
        Assert.Equal(2, v.NumFiles(2));
        Assert.Equal("0", db.GetProperty("rocksdb.compaction-pending")); // the deepest level is not pushed further
        Assert.Equal("vvalue7", System.Text.Encoding.ASCII.GetString(db.Get(K("a007"))!));
    }

    [Fact]
    public void PeriodicCompactionRunsTheFilterOnFilesNoWriteReaches()
    {
        var filter = new PrefixCompactionFilter { Enabled = false };
        KvOptions o = Options(filter);
        o.Ttl = 0; // periodic compaction alone; its default is 30 days with a filter set
        using KvDb db = KvDb.Open("/t/db", o);
        WriteFile(db, "a", 'x'); // values the filter removes once enabled
        WriteFile(db, "m", 'k');
        db.CompactRange(null, null);
        db.Impl.CompactLevel(1, 2, null, null);
        Assert.Equal(1, Files(db, 2));
        filter.Enabled = true;

        _clock.Advance(TimeSpan.FromDays(29));
        Assert.Equal(0, db.Impl.RunCompactionsInline());
        Assert.NotNull(db.Get(K("a005")));

        _clock.Advance(TimeSpan.FromDays(1) + TimeSpan.FromSeconds(2));
        Assert.Equal(1, db.Impl.RunCompactionsInline()); // the level-2 file rewritten within level 2
        Assert.Null(db.Get(K("a005")));
        Assert.Equal("kvalue5", System.Text.Encoding.ASCII.GetString(db.Get(K("m005"))!));
        Assert.Contains("a005", filter.Seen);
        FileMetaData f = Assert.Single(db.Impl.Versions.Current.Files(2));
        Assert.Equal(_clock.NowSeconds, f.FileCreationTime);
        Assert.Equal(0, db.Impl.RunCompactionsInline()); // the rewritten file is young again
    }

    [Fact]
    public void PeriodicCompactionOfLevel0TakesItToTheBaseLevel()
    {
        var filter = new PrefixCompactionFilter();
        KvOptions o = Options(filter);
        o.Ttl = 0;
        o.PeriodicCompactionSeconds = 3600;
        using KvDb db = KvDb.Open("/t/db", o);
        WriteFile(db, "a", 'x');
        _clock.Advance(TimeSpan.FromSeconds(3601));
        Assert.Equal(1, db.Impl.RunCompactionsInline());
        Assert.Equal(0, Files(db, 0));
        Assert.Null(db.Get(K("a001")));
    }

    [Fact]
    public void FifoTtlDeletesTheFilesWhoseDataExpired()
    {
        KvOptions o = Options();
        o.CompactionStyle = CompactionStyle.Fifo;
        o.Ttl = 1000;
        using KvDb db = KvDb.Open("/t/db", o);
        WriteFile(db, "a", 'v');
        WriteFile(db, "b", 'v');
        _clock.Advance(TimeSpan.FromSeconds(600));
        WriteFile(db, "c", 'v');
        _clock.Advance(TimeSpan.FromSeconds(399));
        db.CompactRange(null, null);
        Assert.Equal(3, Files(db, 0)); // nothing older than 1000 s yet

        _clock.Advance(TimeSpan.FromSeconds(2)); // a and b are 1001 s old, c 401 s
        Assert.Equal("1", db.GetProperty("rocksdb.compaction-pending"));
        db.CompactRange(null, null);
        Assert.Equal(1, Files(db, 0));
        Assert.Null(db.Get(K("a001")));
        Assert.Null(db.Get(K("b001")));
        Assert.NotNull(db.Get(K("c001")));
        Assert.Equal("0", db.GetProperty("rocksdb.compaction-pending"));
    }

    [Fact]
    public void TtlSurvivesTheOptionsFileAndReopen()
    {
        KvOptions o = Options();
        o.Ttl = 4321;
        o.PeriodicCompactionSeconds = 1234;
        using (KvDb.Open("/t/db", o))
        {
        }
        KvOptions loaded = KvEngine.OptionsFile.OptionsFileStore.LoadLatest(_fs, "/t/db").ToKvOptions();
        Assert.Equal(4321, loaded.Ttl);
        Assert.Equal(1234, loaded.PeriodicCompactionSeconds);
    }
}
