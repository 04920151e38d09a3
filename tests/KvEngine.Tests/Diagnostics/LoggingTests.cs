using System.Text;
using KvEngine.Diagnostics;
using KvEngine.Storage;
using KvEngine.Tests.Db;
using Microsoft.Extensions.Logging;

namespace KvEngine.Tests.Diagnostics;

/// <summary>
/// KvOptions.LoggerFactory receives the events RocksDB writes to its LOG: flushes, compactions,
/// background errors and resumes, with their event ids and structured fields. Each event is logged
/// before the operation that caused it returns (or fails) to the caller, so the verdicts need no wait.
/// </summary>
public class LoggingTests
{
    private static byte[] K(int i) => Encoding.ASCII.GetBytes($"key{i:D6}");

    private static KvOptions Options(FaultInjectionFileSystem fs, ILoggerFactory logs)
    {
        KvOptions options = DbTestUtil.SmallOptions(fs, writeBufferSize: 1 << 20);
        options.DisableAutoCompactions = true;
        options.LoggerFactory = logs;
        options.MaxBackgroundErrorResumeCount = 0;
        return options;
    }

    private static void PutMany(KvDb db, int from, int to)
    {
        for (int i = from; i < to; i++)
        {
            db.Put(K(i), Encoding.ASCII.GetBytes(new string('v', 100)));
        }
    }

    [Fact]
    public void FlushAndCompactionEventsCarryJobIdsLevelsFilesBytesAndDurations()
    {
        var logs = new TestLoggerFactory();
        using KvDb db = KvDb.Open("/kvtest/log-jobs", Options(DbTestUtil.NewFs(), logs));
        PutMany(db, 0, 500);
        db.Flush();
        PutMany(db, 500, 1000);
        db.Flush();

        IReadOnlyList<TestLoggerFactory.LogEntry> flushes = logs.Events("FlushFinished");
        Assert.Equal(2, flushes.Count);
        foreach (TestLoggerFactory.LogEntry e in flushes)
        {
            Assert.Equal(KvEngineDiagnostics.LoggerCategory, e.Category);
            Assert.Equal(LogLevel.Information, e.Level);
            Assert.Equal(2, e.EventId.Id);
            Assert.Equal("/kvtest/log-jobs", e.Fields["Db"]);
            Assert.True((ulong)e.Fields["FileNumber"]! > 0);
            Assert.True((long)e.Fields["Bytes"]! > 0);
            Assert.True((double)e.Fields["DurationMs"]! >= 0);
            Assert.Equal(1, e.Fields["MemTables"]);
        }
        Assert.Equal(2, logs.Events("FlushStarted").Count);
        Assert.All(logs.Events("FlushStarted"), e => Assert.Equal(LogLevel.Debug, e.Level));

        db.CompactRange(null, null);
        TestLoggerFactory.LogEntry compaction = Assert.Single(logs.Events("CompactionFinished"));
        Assert.Equal(4, compaction.EventId.Id);
        Assert.Equal(0, compaction.Fields["StartLevel"]);
        Assert.True((int)compaction.Fields["OutputLevel"]! >= 1);
        Assert.Equal(2, compaction.Fields["InputFiles"]);
        Assert.True((int)compaction.Fields["OutputFiles"]! >= 1);
        Assert.True((long)compaction.Fields["BytesRead"]! > 0);
        Assert.True((long)compaction.Fields["BytesWritten"]! > 0);
        Assert.Equal(1000L, compaction.Fields["KeysIn"]);
        Assert.Equal("compaction", compaction.Fields["Kind"]);
        TestLoggerFactory.LogEntry started = Assert.Single(logs.Events("CompactionStarted"));
        Assert.Equal(compaction.Fields["JobId"], started.Fields["JobId"]);

        // Job ids are unique across flushes and compactions.
        long[] ids = flushes.Concat([compaction]).Select(e => (long)e.Fields["JobId"]!).ToArray();
        Assert.Equal(ids.Length, ids.Distinct().Count());
    }

    [Fact]
    public void ABackgroundErrorAndTheResumeAreLogged()
    {
        var logs = new TestLoggerFactory();
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        using KvDb db = KvDb.Open("/kvtest/log-error", Options(fs, logs));
        PutMany(db, 0, 100);
        fs.ShouldFail = (op, path) => op == FileOperation.Append && path.EndsWith(".sst", StringComparison.Ordinal);
        Assert.Throws<KvException>(db.Flush);

        TestLoggerFactory.LogEntry error = Assert.Single(logs.Events("BackgroundError"));
        Assert.Equal(LogLevel.Error, error.Level);
        Assert.Equal(7, error.EventId.Id);
        Assert.IsAssignableFrom<IOException>(error.Exception);
        Assert.Equal(BackgroundJobKind.Flush, error.Fields["Operation"]);
        Assert.Equal(false, error.Fields["AutoResume"]);
        Assert.Empty(logs.Events("FlushFinished"));

        // A resume that fails again is logged as such; one that succeeds says what it flushed.
        Assert.Throws<KvException>(db.Resume);
        Assert.Single(logs.Events("ResumeFailed"));
        fs.ShouldFail = null;
        db.Resume();
        TestLoggerFactory.LogEntry resumed = Assert.Single(logs.Events("Resumed"));
        Assert.Equal(8, resumed.EventId.Id);
        Assert.True((int)resumed.Fields["MemTables"]! >= 1);
        Assert.NotEmpty(logs.Events("FlushFinished"));
    }

    [Fact]
    public void AWriteStallIsLoggedAndMeasuredOnce()
    {
        const string path = "/kvtest/log-stall";
        var logs = new TestLoggerFactory();
        using var factory = new TestMeterFactory();
        using var recorder = new MetricsRecorder(path, i => i.Meter.Scope == factory);
        KvOptions options = Options(DbTestUtil.NewFs(), logs);
        options.MeterFactory = factory;
        options.DisableAutoCompactions = false; // stalls apply only with automatic compaction on
        options.Level0FileNumCompactionTrigger = 2;
        options.Level0SlowdownWritesTrigger = 2;
        options.Level0StopWritesTrigger = 1000;
        options.DelayedWriteRate = 1000; // 1 byte of credit per millisecond: the write below must wait
        // The level-0 compaction the two files trigger holds in its filter until the end, so the
        // write below finds two level-0 files whenever it comes.
        using var gate = new ManualResetEventSlim();
        options.CompactionFilter = new GateFilter(gate);
        using KvDb db = KvDb.Open(path, options);
        try
        {
            for (int flush = 0; flush < 2; flush++)
            {
                PutMany(db, flush * 10, flush * 10 + 10);
                db.Flush(); // Flush's memtable switch is never stalled
            }
            Assert.Empty(logs.Events("WriteStallStarted"));
            db.Put("stalled"u8, "x"u8); // two level-0 files: the write is delayed once (RocksDB's slowdown)
        }
        finally
        {
            gate.Set();
        }

        TestLoggerFactory.LogEntry started = Assert.Single(logs.Events("WriteStallStarted"));
        Assert.Equal(LogLevel.Warning, started.Level);
        Assert.Equal(WriteStallCause.Level0Slowdown, started.Fields["Cause"]);
        Assert.Equal(2, started.Fields["Level0Files"]);
        TestLoggerFactory.LogEntry ended = Assert.Single(logs.Events("WriteStallEnded"));
        Assert.Equal(WriteStallCause.Level0Slowdown, ended.Fields["Cause"]);
        recorder.Collect();
        Assert.Single(recorder.Values("kvengine.write.stall.duration", "cause", "level0_slowdown"));
        Assert.True(recorder.Latest("kvengine.write.stall.time") >= 0);
    }

    [Fact]
    public void ADisabledLevelLogsNothing()
    {
        var logs = new TestLoggerFactory { MinLevel = LogLevel.Warning };
        using KvDb db = KvDb.Open("/kvtest/log-quiet", Options(DbTestUtil.NewFs(), logs));
        PutMany(db, 0, 100);
        db.Flush();
        PutMany(db, 100, 200);
        db.Flush();
        db.CompactRange(null, null);
        Assert.Empty(logs.Entries);
    }

    private sealed class GateFilter(ManualResetEventSlim gate) : KvCompactionFilter
    {
        public override string Name => "gate";

        public override KvCompactionFilterDecision FilterValue(int level, ReadOnlySpan<byte> key, ReadOnlySpan<byte> existingValue,
            System.Buffers.IBufferWriter<byte> newValue)
        {
            gate.Wait();
            return KvCompactionFilterDecision.Keep;
        }
    }

    [Fact]
    public void AFailedCloseInDisposeIsLoggedNotThrown()
    {
        var logs = new TestLoggerFactory();
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        KvDb db = KvDb.Open("/kvtest/log-dispose", Options(fs, logs));
        db.Put("unlogged"u8, "1"u8, new WriteOptions { DisableWal = true });
        // The close-time flush of the unlogged write cannot create its table.
        fs.ShouldFail = (op, path) => op == FileOperation.Create && path.EndsWith(".sst", StringComparison.Ordinal);
        db.Dispose();

        TestLoggerFactory.LogEntry failed = Assert.Single(logs.Events("DisposeFailed"));
        Assert.Equal(LogLevel.Error, failed.Level);
        Assert.Equal(10, failed.EventId.Id);
        KvException e = Assert.IsType<KvException>(failed.Exception);
        Assert.Contains("Closing the database failed", e.Message, StringComparison.Ordinal);
        Assert.Equal("/kvtest/log-dispose", failed.Fields["Db"]);
    }
}
