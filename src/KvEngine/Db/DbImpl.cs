using KvEngine.Compaction;
using KvEngine.Diagnostics;
using KvEngine.Storage;
using KvEngine.Table;
using KvEngine.Wal;
using KvEngine.Versions;

namespace KvEngine.Db;

/// <summary>
/// The engine behind <see cref="KvDb"/>: open and close, and the dispatch of every operation to a
/// column family (<see cref="ColumnFamilyData"/>: memtables, read state, table cache, picker).
/// <para>
/// Write path (<c>DbImpl.Write.cs</c>): writers queue on <see cref="_mutex"/>; the writer at the
/// front leads a group: it makes room (switching the memtables of full families to a new WAL,
/// waiting when a family has too many unflushed), merges the queued batches, appends one WAL
/// record, flushes it to the OS (and fsyncs once if any member asked for Sync), inserts each
/// record into its family's mutable memtable, then publishes the last sequence number. One WAL
/// and one sequence for every family: a batch is atomic across families. Memtables never switch
/// while a group inserts; readers never lock and see only entries up to the published sequence.
/// </para>
/// <para>
/// Read path (<c>DbImpl.Read.cs</c>): take the family's <see cref="ReadState"/> then the sequence
/// (or the snapshot's); look in the mutable memtable, the immutable ones newest first, then the
/// tables of the pinned version.
/// </para>
/// <para>
/// Background (<c>DbImpl.Compaction.cs</c>, <c>DbImpl.Flush.cs</c>): MaxBackgroundJobs threads flush
/// each family's oldest immutable memtable into a level-0 table (one flush per family at a time,
/// before any compaction), recording it with the family's new log number and the database's
/// MinLogNumberToKeep in the MANIFEST, and run the compactions the families' pickers choose; each
/// installs a new read state and deletes files nothing uses any more (a WAL once no live family
/// needs it). A background failure makes the database refuse further writes
/// (<see cref="ErrorHandler"/>), as RocksDB does; reads go on.
/// </para>
/// Lock order: <see cref="_mutex"/> before the version set's lock; no I/O under the mutex except
/// syncing the old WAL and creating a new one at a memtable switch, the MANIFEST records of
/// family creation and drop, and an ingestion's level choice, write-back and MANIFEST record
/// (<c>DbImpl.Ingest.cs</c>, as RocksDB's ingestion job runs under its mutex). Guarded by the mutex: the writer queue, the families' memtable
/// lists, the family tables (<see cref="_familiesById"/> is also read lock-free: it is replaced,
/// never changed), background scheduling and the pending outputs.
/// </summary>
internal sealed partial class DbImpl : IDisposable, IWriteGroupWorker, IBackgroundWorker, ITelemetrySource
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
    private readonly HashSet<ulong> _pendingOutputs = new();
    private readonly IDisposable _dbLock;
    private readonly EngineCounters _counters;
    private readonly DbTelemetry _telemetry;
    private readonly ColumnFamilyData _default;
    private readonly List<ColumnFamilyData> _droppedFamilies = new();
    private readonly object _familyGate = new(); // serializes family creation and drop (before _mutex)
    private readonly WriteThread _writeThread;
    private readonly BackgroundScheduler _scheduler;
    private ColumnFamilyData?[] _familiesById;
    private IWritableFile? _logFile;
    private LogWriter? _log;
    private ulong _logNumber;
    private readonly ErrorHandler _errors;
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
        _default = NewFamilyData(_versions.Default, options);
        _familiesById = [_default];
        _writeController = new WriteController(options.DelayedWriteRate);
        _writeThread = new WriteThread(_mutex, options.WriteThreadSpinIterations, this);
        _scheduler = new BackgroundScheduler(this, () => Volatile.Read(ref _closing));
        _errors = new ErrorHandler(_mutex, options, () => _closing, () => _scheduler.Cancellation.WaitHandle, TryResume);
        _telemetry = new DbTelemetry(this, dir, options.MeterFactory, options.LoggerFactory, options.Statistics); // last: nothing after it may throw
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
            _writeThread.FailQueued(new ObjectDisposedException(nameof(KvDb)));
            // Flushes that will now never run: a Flush() waiting on one must not wait forever.
            foreach (ColumnFamilyData cfd in AllFamilies())
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
            _logFile?.Dispose();
        }
        catch (IOException e)
        {
            firstError ??= e;
        }
        List<ColumnFamilyData> families = AllFamilies();
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
                DeleteObsoleteFiles(atOpen: false);
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
        _writeThread.Dispose();
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

    /// <summary>
    /// Holds _mutex. Records the first background error (the database then refuses writes, as
    /// RocksDB does), fails every flush still pending — background work stops picking up jobs
    /// once an error is set, so a Flush() waiting on one would otherwise wait forever — and wakes
    /// every waiter so stalled writers see it. <paramref name="operation"/> is what failed (logged).
    /// </summary>
    private void SetBackgroundError(Exception e, BackgroundJobKind operation)
    {
        if (_errors.Record(e))
        {
            _telemetry.BackgroundError(e, operation, _errors.AutoResumeScheduled);
        }
        foreach (ColumnFamilyData cfd in AllFamilies())
        {
            foreach (ImmutableMemTable imm in cfd.Immutable)
            {
                imm.Flushed.TrySetException(Wrap(_errors.Error ?? e));
            }
        }
        Monitor.PulseAll(_mutex);
    }

    /// <summary>The default family.</summary>
    internal ColumnFamilyData DefaultFamily => _default;

    private ColumnFamilyData NewFamilyData(ColumnFamilyVersions versions, ColumnFamilyOptions options) =>
        new(versions, options, _blockCache, _stats, _dir, _fs, _limiter, this);

    /// <summary>The live families, then the dropped ones not yet closed (a copy). Holds _mutex or runs at open/close.</summary>
    private List<ColumnFamilyData> AllFamilies()
    {
        var result = new List<ColumnFamilyData>(_familiesById.Length + _droppedFamilies.Count);
        foreach (ColumnFamilyData? cfd in _familiesById)
        {
            if (cfd != null)
            {
                result.Add(cfd);
            }
        }
        result.AddRange(_droppedFamilies);
        return result;
    }

    /// <summary>The live families in id order (a copy), read lock-free.</summary>
    internal List<ColumnFamilyData> LiveFamilies()
    {
        ColumnFamilyData?[] byId = Volatile.Read(ref _familiesById);
        var result = new List<ColumnFamilyData>(byId.Length);
        foreach (ColumnFamilyData? cfd in byId)
        {
            if (cfd != null)
            {
                result.Add(cfd);
            }
        }
        return result;
    }

    private List<ColumnFamilyData> FamiliesWithUnpersistedWrites()
    {
        lock (_mutex)
        {
            List<ColumnFamilyData> result = LiveFamilies();
            result.RemoveAll(static f => !f.HasUnpersistedWrites);
            return result;
        }
    }
}
