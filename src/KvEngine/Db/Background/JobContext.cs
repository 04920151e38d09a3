using KvEngine.Compaction;
using KvEngine.Db.Errors;
using KvEngine.Db.State;
using KvEngine.Diagnostics;
using KvEngine.RateLimiting;
using KvEngine.Storage;
using KvEngine.Versions;

namespace KvEngine.Db.Background;

/// <summary>
/// What the flush and compaction runners share of the database (RocksDB passes the same to its
/// FlushJob and CompactionJob): the database mutex, which guards the families' memtable lists and
/// pickers, the pending outputs and the background error; the directory and file system; the
/// version set; the families; the tables being written; the live snapshots; the sweeper; the
/// error handler; telemetry and counters; the rate limit table writes are charged to (null: none). Immutable; every member is thread-safe or guarded by
/// <see cref="Mutex"/> as its own type says.
/// </summary>
internal sealed record JobContext(
    DbMutex Mutex,
    string Dir,
    IFileSystem Fs,
    VersionSet Versions,
    ColumnFamilySet Families,
    PendingOutputs PendingOutputs,
    SnapshotList Snapshots,
    ObsoleteFileSweeper Sweeper,
    ErrorHandler Errors,
    DbTelemetry Telemetry,
    EngineCounters Counters,
    BackgroundWriteLimit? WriteLimit = null);
