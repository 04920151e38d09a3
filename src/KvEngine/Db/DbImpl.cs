using KvEngine.Compaction;
using KvEngine.Db.Background;
using KvEngine.Db.Checkpoints;
using KvEngine.Db.Errors;
using KvEngine.Db.Ingestion;
using KvEngine.Db.Logs;
using KvEngine.Db.Read;
using KvEngine.Db.State;
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
/// <item>checkpoints and backups: <see cref="Checkpointer"/> (over <see cref="ICheckpointSource"/>, which DbImpl
/// implements), <see cref="LiveFiles"/> (and <see cref="WalDirectory"/>);</item>
/// <item>properties and size estimates: <see cref="InternalStats"/>, <see cref="SizeApproximation"/>;</item>
/// <item>the background error and resume: <see cref="ErrorHandler"/> and <see cref="ErrorRecovery"/> (over
/// <see cref="IErrorRecoveryActions"/>, which DbImpl implements with the writer and the flush runner).</item>
/// </list>
/// DbImpl itself owns the family gate, the open/close state, and builds the collaborators above.
/// <para>
/// Lock order: <see cref="_familyGate"/>, the sweeper's gate, the resume gate (<see cref="ErrorRecovery"/>),
/// <see cref="_mutex"/>, the version set's lock. No I/O under the mutex except syncing the old WAL
/// and creating a new one at a memtable switch, the MANIFEST records of family creation and drop,
/// and an ingestion's level choice, write-back and MANIFEST record (<see cref="ExternalFileIngester"/>, as
/// RocksDB's ingestion job runs under its mutex). Guarded by the mutex: the writer queue, the
/// current WAL, the families' memtable lists and the family table
/// (<see cref="ColumnFamilySet.ById"/> is also read lock-free: it is replaced, never changed),
/// background scheduling, the runners' counters, the pending outputs and the background error.
/// Each collaborator's comment says which of its members the mutex guards.
/// </para>
/// <para>
/// Closing (every member may be called concurrently with <see cref="Close"/>): a call either
/// finishes or throws <see cref="ObjectDisposedException"/>, and nothing native is freed under a
/// caller. Reads (Get, MultiGet, KeyMayExist, iterators) pin a <see cref="ReadState"/>: Close
/// publishes <see cref="ReadState.Closed"/> (later reads throw), and the table readers and the
/// owned block cache are freed by <see cref="NativeLifetime"/> once the last pinned state is released,
/// by Close or by the last reader out (an iterator's Dispose). Every other call (writes, flush,
/// compaction, ingestion, properties, file listings, resume) passes the <see cref="CallGate"/>:
/// Close first wakes what such a call can wait for (writes and memtable switches refused, flushes
/// it will not run failed, manual compactions cancelled), then waits for the calls in flight, each
/// of which ends within its current step (a WAL append, a memtable insert, a file copy), and only
/// then frees the WAL, the memtables' own references and the MANIFEST. A call must not close its
/// own database from inside (a compaction filter or merge operator calling Dispose): it would wait
/// for itself.
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
    private readonly DbMutex _mutex = new();
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
    private readonly ErrorRecovery _recovery;
    private readonly FlushRunner _flusher;
    private readonly CompactionRunner _compactions;
    private readonly BackgroundJobPicker _jobPicker;
    private readonly ExternalFileIngester _ingester;
    private readonly LiveFiles _liveFiles;
    private readonly InternalStats _internalStats;
    private readonly PointReader _pointReader;
    private readonly MultiGetReader _multiGetReader;
    private readonly CallGate _calls = new();
    private readonly NativeLifetime _nativeLifetime;
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
        _nativeLifetime = new NativeLifetime(ReleaseNative);
        _stats = options.Statistics;
        _counters = new EngineCounters(options.Statistics);
        _versions = new VersionSet(dir, _fs);
        _limiter = TableCache.NewLimiter(_fs, options.MaxOpenFiles, options.UseDirectReads, options.AdviseRandomOnOpen);
        _families = new ColumnFamilySet(_mutex, NewFamilyData(_versions.Default, options));
        _pendingOutputs = new PendingOutputs(_mutex, _versions);
        _wals = new WalSet(_mutex, dir, _fs, _versions, options.MemoryMappedWal);
        _sweeper = new ObsoleteFileSweeper(_mutex, dir, _fs, _versions, _families, _pendingOutputs, _wals.OldestLive);
        _scheduler = new BackgroundScheduler(() => Volatile.Read(ref _closing));
        _telemetry = new DbTelemetry(this, dir, options.MeterFactory, options.LoggerFactory, options.Statistics);
        // Only plain objects after the telemetry: nothing here may throw once it is registered.
        _errors = new ErrorHandler(_mutex, options, _families, _telemetry, () => _closing, () => _scheduler.Cancellation.WaitHandle, TryResume);
        var jobs = new JobContext(_mutex, dir, _fs, _versions, _families, _pendingOutputs, _snapshots, _sweeper, _errors, _telemetry, _counters,
            options.RateLimiter is { } rateLimiter ? new RateLimiting.BackgroundWriteLimit(rateLimiter, _scheduler.Cancellation) : null);
        _writer = new DbWriter(_mutex, options, _versions, _families, _wals, _errors, _scheduler, _telemetry, _counters);
        _flusher = new FlushRunner(jobs, options.AtomicFlush);
        _recovery = new ErrorRecovery(_mutex, _errors, _families, _telemetry, () => _closing, this);
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

    /// <summary>Close has begun: new calls throw <see cref="ObjectDisposedException"/> (iterators check it on every call).</summary>
    internal bool IsDisposed => Volatile.Read(ref _disposed) != 0;

    /// <summary>
    /// Counts a call in the <see cref="CallGate"/> (dispose the scope to count it out); throws
    /// <see cref="ObjectDisposedException"/> once Close has begun. For every call but the reads,
    /// which pin a read state instead.
    /// </summary>
    internal CallScope EnterCall()
    {
        if (IsDisposed || !_calls.TryEnter())
        {
            ThrowDisposed();
        }
        return new CallScope(_calls);
    }

    [System.Diagnostics.CodeAnalysis.DoesNotReturn]
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static void ThrowDisposed() => throw new ObjectDisposedException(nameof(KvDb));

    /// <summary>
    /// Closes the database: persists unlogged writes, stops background work, waits for the calls in
    /// flight (see the class comment: each ends within its current step), releases files and the
    /// LOCK. Reads in flight finish on the state they pinned; the table readers and the owned block
    /// cache are freed when the last of them (or the last live iterator) is done. Idempotent; every
    /// resource is released even when a step fails, and the first failure is then thrown as
    /// <see cref="KvException"/> (RocksDB's DB::Close status).
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
        _writer.StopAcceptingSwitches(); // a Flush racing the close now fails: no flush runs after the background stops
        StopBackground();
        using (_mutex.Lock())
        {
            // Flushes that will now never run: a Flush() waiting on one must not wait forever.
            foreach (ColumnFamilyData cfd in _families.All())
            {
                foreach (ImmutableMemTable imm in cfd.Immutable)
                {
                    imm.Flushed.TrySetException(new ObjectDisposedException(nameof(KvDb)));
                }
            }
            _mutex.PulseAll();
        }
        _calls.CloseAndWait(); // no write, flush or other gated call runs past this
        using (_mutex.Lock())
        {
            // Writers still queued behind a leader that is gone (only possible after misuse).
            _writer.Thread.FailQueued(new ObjectDisposedException(nameof(KvDb)));
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
        _versions.Dispose();
        _writer.Dispose();
        _scheduler.Dispose();
        _dbLock.Dispose();
        _nativeLifetime.Unref(); // the table readers and block cache go now, or with the last pinned read state
        if (firstError != null)
        {
            throw new KvException("Closing the database failed: " + firstError.Message, firstError);
        }
    }

    /// <summary>
    /// <see cref="Close"/> that never throws (.NET's rule for Dispose): a failure is logged
    /// (<see cref="KvOptions.LoggerFactory"/>; traced when there is none), and
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
            _telemetry.DisposeFailed(e);
        }
    }

    internal void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(IsDisposed, typeof(KvDb));

    /// <summary>The default family.</summary>
    internal ColumnFamilyData DefaultFamily => _families.Default;

    /// <summary>The database mutex (tests that stage a family's flush state take it as the engine does).</summary>
    internal DbMutex Mutex => _mutex;

    /// <summary>The flush runner (tests of what a Flush caller waits for).</summary>
    internal FlushRunner Flusher => _flusher;

    private ColumnFamilyData NewFamilyData(ColumnFamilyVersions versions, ColumnFamilyOptions options) =>
        new(versions, options, _blockCache, _stats, _dir, _fs, _limiter, this, _mutex, _nativeLifetime,
            (_options.UseDirectReads, _options.UseDirectIoForFlushAndCompaction, _options.CompactionReadaheadSize, _options.AdviseRandomOnOpen), _options.TimeProvider);

    /// <summary>
    /// The <see cref="NativeLifetime"/>'s release: the families' table readers and the owned block
    /// cache, once Close ran and no read state is pinned. Runs once, on the thread of the last
    /// release (Close, a read, an iterator's Dispose), so it never throws.
    /// </summary>
    private void ReleaseNative()
    {
        try
        {
            foreach (ColumnFamilyData cfd in _families.All())
            {
                cfd.DisposeTables();
            }
            _ownedBlockCache?.Dispose();
        }
#pragma warning disable CA1031 // runs on a reader's thread: a failure to close a table file is traced, never thrown into that read
        catch (Exception e)
#pragma warning restore CA1031
        {
            _telemetry.ReleaseFailed(e);
        }
    }

    /// <summary>The live families in id order (a copy), read lock-free.</summary>
    internal List<ColumnFamilyData> LiveFamilies() => _families.Live();

    private List<ColumnFamilyData> FamiliesWithUnpersistedWrites()
    {
        using (_mutex.Lock())
        {
            List<ColumnFamilyData> result = _families.Live();
            result.RemoveAll(static f => !f.HasUnpersistedWrites);
            return result;
        }
    }
}
