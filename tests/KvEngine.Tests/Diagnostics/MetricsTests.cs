using System.Diagnostics.Metrics;
using System.Globalization;
using System.Text;
using KvEngine.Storage;
using KvEngine.Tests.Db;

namespace KvEngine.Tests.Diagnostics;

/// <summary>
/// The "KvEngine" meter: its instruments move under puts, gets, flushes and a compaction, agree
/// with the database's properties and statistics, come from the given IMeterFactory (or from a
/// meter the database owns and disposes), and tell two databases apart. Every verdict is read after
/// the synchronous Flush/CompactRange returned, with automatic compaction off: nothing moves
/// between the workload and the collection.
/// </summary>
public class MetricsTests
{
    private static byte[] K(int i) => Encoding.ASCII.GetBytes($"key{i:D6}");

    private static byte[] V(int i) => Encoding.ASCII.GetBytes($"value{i:D6}-{new string('v', 100)}");

    private static long Property(KvDb db, string name) => long.Parse(db.GetProperty(name)!, CultureInfo.InvariantCulture);

    private static KvOptions Options(FaultInjectionFileSystem fs, TestMeterFactory? factory, KvStatistics? stats)
    {
        KvOptions options = DbTestUtil.SmallOptions(fs, writeBufferSize: 1 << 20);
        options.DisableAutoCompactions = true;
        options.MeterFactory = factory;
        options.Statistics = stats;
        return options;
    }

    [Fact]
    public void InstrumentsMoveUnderPutsGetsFlushesAndACompaction()
    {
        const string path = "/kvtest/metrics-workload";
        using var factory = new TestMeterFactory();
        using var recorder = new MetricsRecorder(path, i => i.Meter.Scope == factory);
        var stats = new KvStatistics();
        using KvDb db = KvDb.Open(path, Options(DbTestUtil.NewFs(), factory, stats));

        recorder.Collect();
        Assert.Equal(0, recorder.Latest("kvengine.writes"));
        Assert.Equal(0, recorder.Latest("kvengine.flushes"));

        for (int i = 0; i < 1000; i++)
        {
            db.Put(K(i), V(i));
        }
        db.Flush();
        for (int i = 1000; i < 2000; i++)
        {
            db.Put(K(i), V(i));
        }
        db.Flush();
        for (int i = 0; i < 2000; i += 2)
        {
            Assert.NotNull(db.Get(K(i)));
        }
        db.CompactRange(null, null);
        for (int i = 0; i < 10; i++)
        {
            db.Put(K(i), V(i + 1));
        }

        recorder.Collect(); // the latest of each observable; the histograms' measurements are all kept
        Assert.Equal(1000, recorder.Latest("kvengine.reads"));
        Assert.Equal(2010, recorder.Latest("kvengine.writes"));
        Assert.Equal(stats.GetTickerCount(Ticker.BytesWritten), recorder.Latest("kvengine.write.bytes"));
        Assert.True(recorder.Latest("kvengine.write.bytes") > 2010 * 100);
        Assert.Equal(stats.GetTickerCount(Ticker.BlockReadBytes), recorder.Latest("kvengine.block.read.bytes"));
        Assert.True(recorder.Latest("kvengine.block.read.bytes") > 0);
        Assert.Equal(stats.GetTickerCount(Ticker.BlockCacheHit), recorder.Latest("kvengine.block_cache.hits"));
        Assert.Equal(stats.GetTickerCount(Ticker.BlockCacheMiss), recorder.Latest("kvengine.block_cache.misses"));
        Assert.True(recorder.Latest("kvengine.block_cache.hits") > 0, "the gets read no cached block");
        Assert.True(recorder.Latest("kvengine.block_cache.misses") > 0, "the gets missed no block");

        double flushes = recorder.Latest("kvengine.flushes");
        Assert.True(flushes >= 2, $"{flushes} flushes");
        Assert.Equal(stats.GetTickerCount(Ticker.FlushWriteBytes), recorder.Latest("kvengine.flush.bytes"));
        Assert.True(recorder.Latest("kvengine.flush.bytes") > 0);
        Assert.Equal(flushes, recorder.Values("kvengine.flush.duration").Length); // one histogram measurement per flush

        double compactions = recorder.Latest("kvengine.compactions");
        Assert.True(compactions >= 1, "no compaction counted");
        Assert.Equal(compactions, recorder.Values("kvengine.compaction.duration").Length);
        Assert.Contains(recorder.Values("kvengine.compaction.duration"), d => d >= 0);
        Assert.Equal(stats.GetTickerCount(Ticker.CompactReadBytes), recorder.Latest("kvengine.compaction.bytes", "direction", "read"));
        Assert.Equal(stats.GetTickerCount(Ticker.CompactWriteBytes), recorder.Latest("kvengine.compaction.bytes", "direction", "write"));
        Assert.True(recorder.Latest("kvengine.compaction.bytes", "direction", "write") > 0);
        Assert.Equal(0, recorder.Latest("kvengine.write.stall.time"));

        // Gauges agree with the properties (nothing runs in the background now).
        Assert.Equal(Property(db, "rocksdb.cur-size-all-mem-tables"), recorder.Latest("kvengine.memtable.size"));
        Assert.True(recorder.Latest("kvengine.memtable.size") > 0);
        Assert.Equal(Property(db, "rocksdb.block-cache-usage"), recorder.Latest("kvengine.block_cache.usage"));
        Assert.True(recorder.Latest("kvengine.block_cache.usage") > 0);
        long levelBytes = 0;
        long levelFiles = 0;
        for (int level = 0; level < 7; level++)
        {
            levelBytes += (long)recorder.Latest("kvengine.level.size", "level", level);
            levelFiles += (long)recorder.Latest("kvengine.level.files", "level", level);
            Assert.Equal(Property(db, "rocksdb.num-files-at-level" + level), recorder.Latest("kvengine.level.files", "level", level));
        }
        Assert.Equal(Property(db, "rocksdb.total-sst-files-size"), levelBytes);
        Assert.Equal(0, recorder.Latest("kvengine.level.files", "level", 0)); // compacted down
        Assert.True(levelFiles > 0);

        // Every measurement came from the factory's meter.
        Meter meter = Assert.Single(factory.Meters);
        Assert.Equal(KvEngineDiagnostics.MeterName, meter.Name);
        Assert.Equal(meter, Assert.Single(recorder.SeenMeters));
    }

    [Fact]
    public void TheMeterFactoryIsUsedWhenGivenAndItsMeterOutlivesTheDatabase()
    {
        const string pathA = "/kvtest/metrics-a";
        const string pathB = "/kvtest/metrics-b";
        using var factory = new TestMeterFactory();
        using var a = new MetricsRecorder(pathA, i => i.Meter.Scope == factory);
        using var b = new MetricsRecorder(pathB, i => i.Meter.Scope == factory);
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        KvDb dbA = KvDb.Open(pathA, Options(fs, factory, new KvStatistics()));
        using KvDb dbB = KvDb.Open(pathB, Options(fs, factory, new KvStatistics()));
        Assert.NotEmpty(factory.Meters);
        Assert.All(factory.Meters, m => Assert.Equal(KvEngineDiagnostics.MeterName, m.Name));
        for (int i = 0; i < 10; i++)
        {
            dbA.Put(K(i), V(i));
        }
        for (int i = 0; i < 25; i++)
        {
            dbB.Put(K(i), V(i));
        }

        a.Collect();
        b.Collect();
        Assert.Equal(10, a.Latest("kvengine.writes"));
        Assert.Equal(25, b.Latest("kvengine.writes"));
        Assert.All(a.SeenMeters.Concat(b.SeenMeters), m => Assert.Same(factory, m.Scope));

        // Closed: the database stops reporting; the factory's meter is not the database's to dispose.
        dbA.Dispose();
        a.CollectFresh();
        b.CollectFresh();
        Assert.Empty(a.Values("kvengine.writes"));
        Assert.Equal(25, b.Latest("kvengine.writes"));
        Assert.Empty(a.CompletedMeters);
        Assert.Empty(b.CompletedMeters);
    }

    [Fact]
    public void WithoutAFactoryTheDatabaseOwnsAPlainMeterAndDisposesItWhenItCloses()
    {
        const string path = "/kvtest/metrics-owned";
        using var recorder = new MetricsRecorder(path, i => i.Meter.Scope == null);
        KvDb db = KvDb.Open(path, Options(DbTestUtil.NewFs(), factory: null, stats: null));
        db.Put("k"u8, "v"u8);
        db.Flush();

        recorder.Collect();
        Assert.Equal(1, recorder.Latest("kvengine.flushes"));
        Assert.Single(recorder.Values("kvengine.flush.duration"));
        Assert.Empty(recorder.Values("kvengine.writes")); // counted only with KvOptions.Statistics
        Meter meter = Assert.Single(recorder.SeenMeters);
        Assert.Equal(KvEngineDiagnostics.MeterName, meter.Name);
        Assert.DoesNotContain(meter, recorder.CompletedMeters);

        db.Dispose();
        Assert.Contains(meter, recorder.CompletedMeters);
    }

    [Fact]
    public void PutsAndGetsAllocateNoMoreWithEveryInstrumentListenedTo()
    {
        // The same Put/TryGet loop on a database nobody listens to and on one whose every
        // instrument a listener has enabled (and collects between rounds): the bytes allocated per
        // operation must be the same. The least of three rounds is taken, as a one-off runtime
        // allocation under a parallel test run is not the data path's.
        double unobserved = BytesPerOperation("/kvtest/metrics-alloc-quiet", listen: false);
        double observed = BytesPerOperation("/kvtest/metrics-alloc-listened", listen: true);
        Assert.True(observed <= unobserved + 1, $"{observed} bytes per operation with a listener, {unobserved} without");
    }

    private static double BytesPerOperation(string path, bool listen)
    {
        const int ops = 2000;
        using var factory = new TestMeterFactory();
        using var recorder = listen ? new MetricsRecorder(path, i => i.Meter.Scope == factory) : null;
        using KvDb db = KvDb.Open(path, Options(DbTestUtil.NewFs(), factory, new KvStatistics()));
        var value = new System.Buffers.ArrayBufferWriter<byte>(256);
        byte[][] keys = Enumerable.Range(0, ops).Select(K).ToArray();
        byte[] v = V(0);
        double least = double.MaxValue;
        for (int round = 0; round < 4; round++)
        {
            recorder?.Collect();
            long before = GC.GetAllocatedBytesForCurrentThread();
            for (int i = 0; i < ops; i++)
            {
                db.Put(keys[i], v);
                value.ResetWrittenCount();
                db.TryGet(keys[i], value);
            }
            double perOp = (GC.GetAllocatedBytesForCurrentThread() - before) / (double)(2 * ops);
            if (round > 0) // round 0 warms up
            {
                least = Math.Min(least, perOp);
            }
        }
        if (recorder != null)
        {
            recorder.Collect();
            Assert.True(recorder.Latest("kvengine.writes") >= 4 * ops);
        }
        return least;
    }
}
