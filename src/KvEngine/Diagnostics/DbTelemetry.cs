using System.Diagnostics.Metrics;
using KvEngine.Compaction;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace KvEngine.Diagnostics;

/// <summary>
/// One database's telemetry: its meter (from <see cref="KvOptions.MeterFactory"/>, or a plain
/// "KvEngine" meter this object owns and disposes), its registration with that meter's shared
/// <see cref="KvEngineInstruments"/>, its logger (<see cref="KvOptions.LoggerFactory"/>, category
/// <see cref="KvEngineDiagnostics.LoggerCategory"/>; a null logger otherwise) and the hooks the
/// database calls at flush, compaction, write-stall and background-error granularity — never per
/// read or write. Invariant: registered from construction until <see cref="Dispose"/>, which the
/// database calls first thing in Close, so observable callbacks never read a closed database.
/// Thread-safe.
/// </summary>
internal sealed class DbTelemetry : IDisposable
{
    private readonly ITelemetrySource _db;
    private readonly Meter? _ownedMeter;
    private readonly KvEngineInstruments _instruments;
    private readonly ILogger _logger;
    private readonly string _dbName;
    private long _lastJobId;
    private int _disposed;

    public DbTelemetry(ITelemetrySource db, string dbName, IMeterFactory? meterFactory, ILoggerFactory? loggerFactory, KvStatistics? statistics)
    {
        _db = db;
        _dbName = dbName;
        DbTag = new KeyValuePair<string, object?>(KvEngineDiagnostics.DbNamespaceTag, dbName);
        Statistics = statistics;
        _logger = loggerFactory?.CreateLogger(KvEngineDiagnostics.LoggerCategory) ?? NullLogger.Instance;
        Meter meter;
        if (meterFactory != null)
        {
            meter = meterFactory.Create(new MeterOptions(KvEngineDiagnostics.MeterName));
        }
        else
        {
            meter = _ownedMeter = new Meter(KvEngineDiagnostics.MeterName);
        }
        _instruments = KvEngineInstruments.For(meter);
        _instruments.Register(this);
    }

    /// <summary>The <see cref="KvEngineDiagnostics.DbNamespaceTag"/> tag of every measurement.</summary>
    public KeyValuePair<string, object?> DbTag { get; }

    /// <summary>The database's statistics, or null (then the ticker-fed counters report nothing for it).</summary>
    public KvStatistics? Statistics { get; }

    public EngineCounters Counters => _db.Counters;

    public ILogger Logger => _logger;

    public long MemTableBytes() => _db.MemTableBytes();

    public long BlockCacheUsage() => _db.BlockCacheUsageBytes();

    public void LevelSizes(Span<long> values, bool files) => _db.LevelSizes(values, files);

    /// <summary>A new background job id (RocksDB's job ids in its LOG), shared by flushes and compactions.</summary>
    public long NextJobId() => Interlocked.Increment(ref _lastJobId);

    public void FlushStarted(long jobId, int memTables, long memTableBytes) =>
        DbLog.FlushStarted(_logger, _dbName, jobId, memTables, memTableBytes);

    public void FlushFinished(long jobId, int memTables, ulong fileNumber, long bytes, TimeSpan duration)
    {
        _instruments.FlushDuration.Record(duration.TotalSeconds, DbTag);
        DbLog.FlushFinished(_logger, _dbName, jobId, memTables, fileNumber, bytes, duration.TotalMilliseconds);
    }

    public void CompactionStarted(long jobId, Compaction.Compaction c)
    {
        if (_logger.IsEnabled(LogLevel.Debug))
        {
            DbLog.CompactionStarted(_logger, _dbName, jobId, c.Reason, c.StartInputs.Length, c.StartLevel, c.OutputInputs.Length, c.OutputLevel,
                c.InputBytes, c.Score);
        }
    }

    public void CompactionFinished(long jobId, Compaction.Compaction c, LevelCompactionStats stats, int outputFiles, TimeSpan duration)
    {
        _instruments.CompactionDuration.Record(duration.TotalSeconds, DbTag,
            new KeyValuePair<string, object?>("level", KvEngineInstruments.LevelTag(c.OutputLevel)));
        if (_logger.IsEnabled(LogLevel.Information))
        {
            string kind = c.IsDeletion ? "deletion" : c.IsTrivialMove ? "trivial move" : "compaction";
            DbLog.CompactionFinished(_logger, _dbName, jobId, c.Reason, kind, c.StartLevel, c.OutputLevel,
                c.InputFileCount, outputFiles, stats.BytesReadNonOutput + stats.BytesReadOutput,
                stats.BytesWritten, stats.KeysIn, stats.KeysDropped, duration.TotalMilliseconds);
        }
    }

    public void WriteStallStarted(WriteStallCause cause, int level0Files, int immutableMemTables) =>
        DbLog.WriteStallStarted(_logger, _dbName, cause, level0Files, immutableMemTables);

    public void WriteStallEnded(WriteStallCause cause, TimeSpan duration)
    {
        _instruments.WriteStallDuration.Record(duration.TotalSeconds, DbTag,
            new KeyValuePair<string, object?>("cause", CauseTag(cause)));
        DbLog.WriteStallEnded(_logger, _dbName, cause, duration.TotalMilliseconds);
    }

    public void BackgroundError(Exception error, BackgroundJobKind operation, bool autoResume) =>
        DbLog.BackgroundError(_logger, error, _dbName, operation, autoResume);

    public void Resumed(int memTables) => DbLog.Resumed(_logger, _dbName, memTables);

    public void ResumeFailed(Exception error) => DbLog.ResumeFailed(_logger, error, _dbName);

    /// <summary>Dispose's close failed (Dispose never throws): logged, or traced when no logger is configured.</summary>
    public void DisposeFailed(Exception error)
    {
        if (_logger == NullLogger.Instance)
        {
            System.Diagnostics.Trace.TraceError($"KvEngine: closing {_dbName} failed: {error}");
        }
        DbLog.DisposeFailed(_logger, error, _dbName);
    }

    /// <summary>Releasing the table files after close failed (it runs on a reader's thread and never throws): logged, or traced without a logger.</summary>
    public void ReleaseFailed(Exception error)
    {
        if (_logger == NullLogger.Instance)
        {
            System.Diagnostics.Trace.TraceError($"KvEngine: releasing the tables of {_dbName} failed: {error}");
        }
        DbLog.ReleaseFailed(_logger, error, _dbName);
    }

    /// <summary>Stops publishing this database (no callback reads it once this returns); disposes an owned meter.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }
        _instruments.Unregister(this);
        _ownedMeter?.Dispose();
    }

    private static string CauseTag(WriteStallCause cause) => cause switch
    {
        WriteStallCause.Level0Slowdown => "level0_slowdown",
        WriteStallCause.Level0Stop => "level0_stop",
        _ => "memtable_limit",
    };
}
