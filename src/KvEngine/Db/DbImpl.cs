using KvEngine.Compaction;
using KvEngine.Db.Background;
using KvEngine.Db.Checkpoints;
using KvEngine.Db.Errors;
using KvEngine.Db.Ingestion;
using KvEngine.Db.Logs;
using KvEngine.Db.Read;
using KvEngine.Db.Stats;
using KvEngine.Db.Write;
using KvEngine.Diagnostics;
using KvEngine.Storage;
using KvEngine.Table;
using KvEngine.Versions;

namespace KvEngine.Db;

/// <summary>
/// The engine behind <see cref="KvDb"/>: open and close, and the dispatch of every operation to a
/// column family (<see cref="ColumnFamilyData"/>: memtables, read state, table cache, picker) and
/// to the types that do the work (RocksDB's split of DBImpl):
/// <list type="bullet">
/// <item>recovery at open: <see cref="Recovery.DbRecovery"/> and <see cref="Recovery.WalReplayer"/>;</item>
/// <item>the write path: <see cref="DbWriter"/> (writers queue in the <see cref="WriteThread"/>; the
/// leader of a group makes room with the <see cref="MemTableSwitcher"/> and <see cref="WriteStalls"/>,
/// appends one record for the group to the current WAL of the <see cref="WalSet"/>, inserts each
/// record into its family's memtable (<see cref="WriteGroupInserter"/>, <see cref="MemTableInserter"/>)
/// and publishes the last sequence number); one WAL and one sequence for every family, so a batch
/// is atomic across families;</item>
/// <item>the read path: <c>DbImpl.Read.cs</c> pins the family's <see cref="ReadState"/> (no lock), takes the
/// sequence and dispatches to <see cref="PointReader"/>, <see cref="MultiGetReader"/>,
/// <see cref="KeyMayExistLookup"/> or <see cref="IteratorBuilder"/> (with <see cref="MergeLookup"/>);</item>
/// <item>background work: the <see cref="BackgroundScheduler"/>'s threads ask the
/// <see cref="BackgroundJobPicker"/>, which takes flushes from <see cref="Background.FlushRunner"/> first, then compactions from
/// <see cref="Background.CompactionRunner"/>, which also runs manual compactions;
/// <see cref="Background.ObsoleteFileSweeper"/> deletes what they made obsolete (never a
/// <see cref="Background.PendingOutputs"/> table);</item>
/// <item>external file ingestion: <see cref="ExternalFileIngester"/> and its <see cref="ExternalSstFileIngestionJob"/>;</item>
/// <item>checkpoints and backups: <see cref="Checkpointer"/>, <see cref="LiveFiles"/> (and <see cref="WalDirectory"/>);</item>
/// <item>properties and size estimates: <see cref="InternalStats"/>, <see cref="SizeApproximation"/>;</item>
/// <item>the background error and resume: <see cref="ErrorHandler"/>.</item>
/// </list>
/// DbImpl itself owns the family gate, the open/close state, and builds the collaborators above.
/// <para>
/// Lock order: <see cref="_familyGate"/>, the sweeper's gate, the error handler's resume gate,
/// <see cref="_mutex"/>, the version set's lock. No I/O under the mutex except syncing the old WAL
/// and creating a new one at a memtable switch, the MANIFEST records of family creation and drop,
/// and an ingestion's level choice, write-back and MANIFEST record (<see cref="ExternalFileIngester"/>, as
/// RocksDB's ingestion job runs under its mutex). Guarded by the mutex: the writer queue, the
/// current WAL, the families' memtable lists and the family table
/// (<see cref="ColumnFamilySet.ById"/> is also read lock-free: it is replaced, never changed),
/// background scheduling, the runners' counters, the pending outputs and the background error.
/// Each collaborator's comment says which of its members the mutex guards.
/// </para>
/// </summary>
internal sealed partial class DbImpl : IDisposable, ITelemetrySource
{
    private readonly string _dir;
    private readonly KvOptions _options;
    private readonly IFileSystem _fs;
    private readonly VersionSet _versions;
    private readonly OpenFileLimiter? _limiter;
    private readonly KvBlockCache? _ownedBlockCache;
    private readonly KvBlockCache _blockCache;
    private readonly SnapshotList _snapshots = new();
    private readonly KvStatistics? _stats;
    private readonly object _mutex = new();
    private readonly IDisposable _dbLock;
    private readonly EngineCounters _counters;
    private readonly DbTelemetry _telemetry;
    private readonly ColumnFamilySet _families;
    private readonly object _familyGate = new(); // serializes family creation and drop (before _mutex)
    private readonly WalSet _wals;
    private readonly DbWriter _writer;
    private readonly BackgroundScheduler _scheduler;
    private readonly PendingOutputs _pendingOutputs;
    private readonly ObsoleteFileSweeper _sweeper;
    private readonly ErrorHandler _errors;
    private readonly FlushRunner _flusher;
    private readonly CompactionRunner _compactions;
    private readonly BackgroundJobPicker _jobPicker;
    private readonly ExternalFileIngester _ingester;
    private readonly LiveFiles _liveFiles;
    private readonly InternalStats _internalStats;
    private readonly PointReader _pointReader;
    private readonly MultiGetReader _multiGetReader;
    private bool _closing;
    private int _disposed;

    private DbImpl(string dir, KvOptions options, IDisposable dbLock)
    {
        _dir = dir;
        _options = options;
        _fs = options.FileSystem;
        _dbLock = dbLock;
        _ownedBlockCache = options.BlockCache == null
            ? new KvBlockCache(KvBlockCache.DefaultCapacity, compressedSecondaryCacheSize: options.CompressedSecondaryCacheSize,
                compressedSecondaryCacheCompression: options.CompressedSecondaryCacheCompression, compressedSecondaryCacheSplit: options.CompressedSecondaryCacheSplit)
            : null;
        _blockCache = (options.BlockCache ?? _ownedBlockCache)!;
        _stats = options.Statistics;
        _counters = new EngineCounters(options.Statistics);
        _versions = new VersionSet(dir, _fs);
        _limiter = TableCache.NewLimiter(_fs, options.MaxOpenFiles);
        _families = new ColumnFamilySet(NewFamilyData(_versions.Default, options));
        _pendingOutputs = new PendingOutputs(_mutex, _versions);
        _wals = new WalSet(dir, _fs, _versions, options.MemoryMappedWal);
        _sweeper = new ObsoleteFileSweeper(_mutex, dir, _fs, _versions, _families, _pendingOutputs, _wals.OldestLive);
        _scheduler = new BackgroundScheduler(() => Volatile.Read(ref _closing));
        _telemetry = new DbTelemetry(this, dir, options.MeterFactory, options.LoggerFactory, options.Statistics);
        // Only plain objects after the telemetry: nothing here may throw once it is registered.
        _errors = new ErrorHandler(_mutex, options, _families, _telemetry, () => _closing, () => _scheduler.Cancellation.WaitHandle, TryResume);
        var jobs = new JobContext(_mutex, dir, _fs, _versions, _families, _pendingOutputs, _snapshots, _sweeper, _errors, _telemetry, _counters,
            options.RateLimiter is { } rateLimiter ? new RateLimiting.BackgroundWriteLimit(rateLimiter, _scheduler.Cancellation) : null);
        _writer = new DbWriter(_mutex, options, _versions, _families, _wals, _errors, _scheduler, _telemetry, _counters);
        _flusher = new FlushRunner(jobs, options.AtomicFlush);
        _compactions = new CompactionRunner(jobs, options.MaxBackgroundJobs, _scheduler.Cancellation, () => _closing, ThrowIfDisposed, _scheduler.Wake);
        _jobPicker = new BackgroundJobPicker(_mutex, () => _closing, _errors, _flusher, _compactions, _families);
        _ingester = new ExternalFileIngester(jobs, options.AtomicFlush, _writer, _flusher, _scheduler);
        _liveFiles = new LiveFiles(_mutex, _familyGate, dir, _fs, _versions, _wals, ThrowIfDisposed);
        _internalStats = new InternalStats(_mutex, _versions, _snapshots, _blockCache, _errors);
        _pointReader = new PointReader(_stats, _scheduler.Wake);
        _multiGetReader = new MultiGetReader(_stats, _scheduler.Wake);
        IteratorCursors = new IteratorCursorPool(this, Math.Clamp(2 * Environment.ProcessorCount, 8, 64));
    }

    internal string Directory => _dir;

    /// <summary>The version set; <see cref="ObjectDisposedException"/> after Dispose (KvDb.LatestSequenceNumber reads it).</summary>
    internal VersionSet Versions
    {
        get
        {
            ThrowIfDisposed();
            return _versions;
        }
    }

    internal SnapshotList Snapshots => _snapshots;

    internal KvStatistics? Statistics => _stats;

    /// <summary>The cursors of disposed <see cref="KvIterator"/>s, for the next ones.</summary>
    internal IteratorCursorPool IteratorCursors { get; }

    private bool IsDisposed => Volatile.Read(ref _disposed) != 0;

    /// <summary>
    /// Closes the database: persists unlogged writes, stops background work, releases files and
    /// the LOCK. Idempotent; every resource is released even when a step fails, and the first
    /// failure is then thrown as <see cref="KvException"/> (RocksDB's DB::Close status).
    /// </summary>
    public void Close()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }
        _writer.StopAcceptingWrites();
        lock (_familyGate)
        {
            // A family creation or drop in progress finishes first; later ones see the database closed.
        }
        _telemetry.Dispose(); // first: no metrics callback reads what Close releases
        Exception? firstError = null;
        try
        {
            // Data written with DisableWal exists only in memtables: persist it, as RocksDB does
            // at close unless avoid_flush_during_shutdown is set.
            if (_errors.Error == null && FamiliesWithUnpersistedWrites() is { Count: > 0 } unpersisted)
            {
                FlushCore(unpersisted, wait: true);
            }
        }
        catch (Exception e) when (e is IOException or KvException)
        {
            firstError = e;
        }
        StopBackground();
        lock (_mutex)
        {
            // Writers still queued behind a leader that is gone (only possible after misuse).
            _writer.Thread.FailQueued(new ObjectDisposedException(nameof(KvDb)));
            // Flushes that will now never run: a Flush() waiting on one must not wait forever.
            foreach (ColumnFamilyData cfd in _families.All())
            {
                foreach (ImmutableMemTable imm in cfd.Immutable)
                {
                    imm.Flushed.TrySetException(new ObjectDisposedException(nameof(KvDb)));
                }
            }
            Monitor.PulseAll(_mutex);
        }
        try
        {
            _wals.Dispose();
        }
        catch (IOException e)
        {
            firstError ??= e;
        }
        List<ColumnFamilyData> families = _families.All();
        foreach (ColumnFamilyData cfd in families)
        {
            cfd.ReleaseMemory();
        }
        if (_errors.Error == null && _recovered)
        {
            // As RocksDB does at close: files that only now lost their last reader (old versions
            // pinned until the read state above was released) go now rather than at the next open.
            // Never after a failed or refused open: the files the version does not name may be
            // what a repair (BestEffortsRecovery) needs.
            try
            {
                _sweeper.Sweep(atOpen: false);
            }
            catch (IOException e)
            {
                firstError ??= e;
            }
        }
        foreach (ColumnFamilyData cfd in families)
        {
            cfd.Close();
        }
        _ownedBlockCache?.Dispose();
        _versions.Dispose();
        _writer.Dispose();
        _scheduler.Dispose();
        _dbLock.Dispose();
        if (firstError != null)
        {
            throw new KvException("Closing the database failed: " + firstError.Message, firstError);
        }
    }

    /// <summary>
    /// <see cref="Close"/> that never throws (.NET's rule for Dispose): a failure is traced, and
    /// callers who need it call <see cref="Close"/> instead. Nothing acknowledged is lost by it:
    /// a failed close leaves the WAL for the next open to replay.
    /// </summary>
    public void Dispose()
    {
        try
        {
            Close();
        }
#pragma warning disable CA1031 // Dispose must not throw; Close() surfaces the error to callers who want it
        catch (Exception e)
#pragma warning restore CA1031
        {
            System.Diagnostics.Trace.TraceError($"KvEngine: closing {_dir} failed: {e}");
        }
    }

    internal void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(IsDisposed, typeof(KvDb));

    /// <summary>The default family.</summary>
    internal ColumnFamilyData DefaultFamily => _families.Default;

    /// <summary>The database mutex (tests that stage a family's flush state take it as the engine does).</summary>
    internal object Mutex => _mutex;

    /// <summary>The flush runner (tests of what a Flush caller waits for).</summary>
    internal FlushRunner Flusher => _flusher;

    private ColumnFamilyData NewFamilyData(ColumnFamilyVersions versions, ColumnFamilyOptions options) =>
        new(versions, options, _blockCache, _stats, _dir, _fs, _limiter, this);

    /// <summary>The live families in id order (a copy), read lock-free.</summary>
    internal List<ColumnFamilyData> LiveFamilies() => _families.Live();

    private List<ColumnFamilyData> FamiliesWithUnpersistedWrites()
    {
        lock (_mutex)
        {
            List<ColumnFamilyData> result = _families.Live();
            result.RemoveAll(static f => !f.HasUnpersistedWrites);
            return result;
        }
    }
}
