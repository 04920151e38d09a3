using KvEngine.Compaction;
using Microsoft.Extensions.Logging;

namespace KvEngine.Diagnostics;

/// <summary>
/// The engine's log events (what RocksDB writes to its LOG file), as LoggerMessage source-generated
/// methods: each checks <see cref="ILogger.IsEnabled"/> first, so a disabled level costs no
/// allocation or formatting. Event ids are stable (documented in docs/design.md): never renumber.
/// Every event carries the database's path as <c>Db</c>; sizes are bytes, durations milliseconds.
/// Stateless and thread-safe.
/// </summary>
internal static partial class DbLog
{
    [LoggerMessage(EventId = 1, EventName = "FlushStarted", Level = LogLevel.Debug,
        Message = "[{Db}] Flush job {JobId}: flushing {MemTables} memtable(s), {MemTableBytes} bytes")]
    public static partial void FlushStarted(ILogger logger, string db, long jobId, int memTables, long memTableBytes);

    [LoggerMessage(EventId = 2, EventName = "FlushFinished", Level = LogLevel.Information,
        Message = "[{Db}] Flush job {JobId}: {MemTables} memtable(s) into table #{FileNumber} at level 0, {Bytes} bytes in {DurationMs:F1} ms")]
    public static partial void FlushFinished(ILogger logger, string db, long jobId, int memTables, ulong fileNumber, long bytes, double durationMs);

    [LoggerMessage(EventId = 3, EventName = "CompactionStarted", Level = LogLevel.Debug,
        Message = "[{Db}] Compaction job {JobId} ({Reason}): {StartFiles} file(s) at level {StartLevel} + {OutputLevelFiles} file(s) at level {OutputLevel}, {InputBytes} bytes, score {Score:F2}")]
    public static partial void CompactionStarted(ILogger logger, string db, long jobId, CompactionReason reason, int startFiles, int startLevel,
        int outputLevelFiles, int outputLevel, long inputBytes, double score);

    [LoggerMessage(EventId = 4, EventName = "CompactionFinished", Level = LogLevel.Information,
        Message = "[{Db}] Compaction job {JobId} ({Reason}, {Kind}): level {StartLevel} -> {OutputLevel}, {InputFiles} input file(s), {OutputFiles} output file(s), read {BytesRead} bytes, wrote {BytesWritten} bytes, {KeysIn} keys in, {KeysDropped} dropped, {DurationMs:F1} ms")]
    public static partial void CompactionFinished(ILogger logger, string db, long jobId, CompactionReason reason, string kind, int startLevel,
        int outputLevel, int inputFiles, int outputFiles, long bytesRead, long bytesWritten, long keysIn, long keysDropped, double durationMs);

    [LoggerMessage(EventId = 5, EventName = "WriteStallStarted", Level = LogLevel.Warning,
        Message = "[{Db}] Stalling writes ({Cause}): {Level0Files} level-0 file(s), {ImmutableMemTables} immutable memtable(s)")]
    public static partial void WriteStallStarted(ILogger logger, string db, WriteStallCause cause, int level0Files, int immutableMemTables);

    [LoggerMessage(EventId = 6, EventName = "WriteStallEnded", Level = LogLevel.Information,
        Message = "[{Db}] Write stall ({Cause}) ended after {DurationMs:F1} ms")]
    public static partial void WriteStallEnded(ILogger logger, string db, WriteStallCause cause, double durationMs);

    [LoggerMessage(EventId = 7, EventName = "BackgroundError", Level = LogLevel.Error,
        Message = "[{Db}] Background error in {Operation}; the database refuses writes until it is resumed (automatic resume: {AutoResume})")]
    public static partial void BackgroundError(ILogger logger, Exception error, string db, BackgroundJobKind operation, bool autoResume);

    [LoggerMessage(EventId = 8, EventName = "Resumed", Level = LogLevel.Information,
        Message = "[{Db}] Resumed after a background error: {MemTables} memtable(s) flushed, writes accepted again")]
    public static partial void Resumed(ILogger logger, string db, int memTables);

    [LoggerMessage(EventId = 9, EventName = "ResumeFailed", Level = LogLevel.Warning,
        Message = "[{Db}] Resuming after a background error failed; the database still refuses writes")]
    public static partial void ResumeFailed(ILogger logger, Exception error, string db);

    [LoggerMessage(EventId = 10, EventName = "DisposeFailed", Level = LogLevel.Error,
        Message = "[{Db}] Closing the database in Dispose failed; the WAL keeps every acknowledged write for the next open")]
    public static partial void DisposeFailed(ILogger logger, Exception error, string db);

    [LoggerMessage(EventId = 11, EventName = "ReleaseFailed", Level = LogLevel.Error,
        Message = "[{Db}] Releasing the table files after close failed")]
    public static partial void ReleaseFailed(ILogger logger, Exception error, string db);
}
