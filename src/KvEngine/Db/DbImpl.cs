using KvEngine.Compaction;
using KvEngine.Diagnostics;
using KvEngine.Filters;
using KvEngine.Memtable;
using KvEngine.Storage;
using KvEngine.Table;
using KvEngine.Wal;

namespace KvEngine.Db;

/// <summary>
/// The engine behind <see cref="KvDb"/>.
/// <para>
/// Write path (<c>DbImpl.Write.cs</c>): writers queue on <see cref="_mutex"/>; the writer at the
/// front leads a group: it makes room (switching memtables, waiting when too many are unflushed),
/// merges the queued batches, appends one WAL record, flushes it to the OS (and fsyncs once if
/// any member asked for Sync), inserts into the mutable memtable, then publishes the last
/// sequence number. Only the leader touches the WAL and the mutable memtable, so the memtable has
/// one writer; readers never lock and see only entries up to the published sequence.
/// </para>
/// <para>
/// Read path (<c>DbImpl.Read.cs</c>): take the sequence (or the snapshot's), pin the current
/// <see cref="ReadState"/>, look in the mutable memtable, the immutable ones newest first, then the
/// tables of the pinned version.
/// </para>
/// <para>
/// Background (<c>DbImpl.Compaction.cs</c>, <c>DbImpl.Flush.cs</c>): MaxBackgroundJobs threads flush
/// the oldest immutable memtable into a level-0 table (one flush at a time, before any compaction),
/// recording it with the new oldest-needed WAL number in the MANIFEST, and run the compactions the
/// picker chooses; each installs a new read state and deletes files nothing uses any more. A
/// background failure makes the database refuse further writes (<see cref="_backgroundError"/>), as
/// RocksDB does; reads go on.
/// </para>
/// Lock order: <see cref="_mutex"/> before the version set's lock; no I/O under the mutex except
/// syncing the old WAL and creating a new one at a memtable switch.
/// </summary>
internal sealed partial class DbImpl : IDisposable
{
    private readonly string _dir;
    private readonly KvOptions _options;
    private readonly IFileSystem _fs;
    private readonly TableOptions _tableOptions;

    /// <summary>Options for compaction outputs at the bottommost level (<see cref="ColumnFamilyOptions.BottommostCompression"/>); <see cref="_tableOptions"/> when unset.</summary>
    private readonly TableOptions _bottommostTableOptions;
    private readonly VersionSet _versions;
    private readonly TableCache _tables;
    private readonly KvBlockCache? _ownedBlockCache;
    private readonly KvBlockCache _blockCache;
    private readonly SnapshotList _snapshots = new();
    private readonly KvStatistics? _stats;
    private readonly object _mutex = new();
    private readonly SemaphoreSlim _backgroundWake = new(0);
    private readonly List<ImmutableMemTable> _immutable = new();
    private readonly HashSet<ulong> _pendingOutputs = new();
    private readonly IDisposable _dbLock;
    private readonly CompactionOptions _compactionOptions;
    private readonly CompactionPicker _picker;
    private readonly CompactionStatistics _compactionStats = new(Version.NumLevels);
    private readonly EngineCounters _counters;
    private readonly DbTelemetry _telemetry;
    private MemTable _mem;
    private ReadState _readState;
    private IWritableFile? _logFile;
    private LogWriter? _log;
    private ulong _logNumber;
    private bool _hasUnpersistedWrites;
    private Exception? _backgroundError;
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
        _tableOptions = new TableOptions
        {
            BlockCache = (_blockCache = (options.BlockCache ?? _ownedBlockCache)!).Primary,
            CacheIndexAndFilterBlocks = options.CacheIndexAndFilterBlocks,
            PinL0FilterAndIndexBlocksInCache = options.PinL0FilterAndIndexBlocksInCache,
            MaxFileSizeForL0MetaPin = options.WriteBufferSize / 2 * 3, // RocksDB's MaxFileSizeForL0MetaPin
            BlockSize = options.BlockSize,
            BlockRestartInterval = options.BlockRestartInterval,
            Compression = (Compression.CompressionType)(byte)options.Compression,
            CompressionLevel = options.CompressionLevel,
            Checksum = (ChecksumType)(byte)options.Checksum,
            FilterPolicy = options.BloomBitsPerKey > 0 ? new FastLocalBloomPolicy(options.BloomBitsPerKey) : null,
            Statistics = options.Statistics,
            OptimizeFiltersForMemory = options.OptimizeFiltersForMemory,
            IndexType = (IndexType)(uint)options.IndexType,
            PartitionFilters = options.PartitionFilters,
            MetadataBlockSize = options.MetadataBlockSize,
            DecouplePartitionedFilters = options.DecouplePartitionedFilters,
            PinTopLevelIndexAndFilter = options.PinTopLevelIndexAndFilter,
            TopLevelIndexPinning = (PinningTier)(int)options.MetadataCacheOptions.TopLevelIndexPinning,
            PartitionPinning = (PinningTier)(int)options.MetadataCacheOptions.PartitionPinning,
            UnpartitionedPinning = (PinningTier)(int)options.MetadataCacheOptions.UnpartitionedPinning,
            MergeOperatorName = options.MergeOperator?.Name,
        };
        _bottommostTableOptions = options.BottommostCompression is null && options.BottommostCompressionLevel is null
            ? _tableOptions
            : _tableOptions with
            {
                Compression = (Compression.CompressionType)(byte)(options.BottommostCompression ?? options.Compression),
                CompressionLevel = options.BottommostCompressionLevel ?? options.CompressionLevel,
            };
        _stats = options.Statistics;
        _counters = new EngineCounters(options.Statistics);
        _compactionOptions = CompactionOptions.From(options);
        _picker = new CompactionPicker(_compactionOptions);
        _versions = new VersionSet(dir, _fs);
        _tables = new TableCache(dir, _fs, _tableOptions, options.Statistics, options.MaxOpenFiles);
        _mem = NewMemTable();
        _readState = new ReadState(_mem, Array.Empty<MemTable>(), _versions.Current);
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
        _telemetry.Dispose(); // first: no metrics callback reads what Close releases
        Exception? firstError = null;
        try
        {
            // Data written with DisableWal exists only in memtables: persist it, as RocksDB does
            // at close unless avoid_flush_during_shutdown is set.
            if (_hasUnpersistedWrites && _backgroundError == null)
            {
                FlushCore(wait: true);
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
            for (WriteRequest? w = _queueHead; w != null; w = w.Next)
            {
                Complete(w, new ObjectDisposedException(nameof(KvDb)));
            }
            _queueHead = null;
            _queueTail = null;
            // Flushes that will now never run: a Flush() waiting on one must not wait forever.
            foreach (ImmutableMemTable imm in _immutable)
            {
                imm.Flushed.TrySetException(new ObjectDisposedException(nameof(KvDb)));
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
        DropSpareIterators();
        _readState.Unref();
        _mem.Unref();
        foreach (ImmutableMemTable imm in _immutable)
        {
            imm.Mem.Unref();
        }
        _immutable.Clear();
        if (_backgroundError == null && _recovered)
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
        _tables.Dispose();
        _ownedBlockCache?.Dispose();
        _versions.Dispose();
        foreach (WriteGroup group in _groupPool)
        {
            group.Dispose();
        }
        _backgroundWake.Dispose();
        _shutdown.Dispose();
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

    /// <summary>True when <see cref="ColumnFamilyOptions.MergeOperator"/> is set (merges may be written).</summary>
    public bool HasMergeOperator => _options.MergeOperator is not null;

    private MemTable NewMemTable() => new(ArenaBlockSize(_options.WriteBufferSize));

    /// <summary>RocksDB's default arena block: an eighth of the write buffer, 4 KiB..1 MiB here.</summary>
    private static int ArenaBlockSize(long writeBufferSize) =>
        (int)Math.Clamp(writeBufferSize / 8, 4096, 1 << 20);

    /// <summary>
    /// Holds _mutex. Records the first background error (the database then refuses writes, as
    /// RocksDB does), fails every flush still pending — background work stops picking up jobs
    /// once an error is set, so a Flush() waiting on one would otherwise wait forever — and wakes
    /// every waiter so stalled writers see it. <paramref name="operation"/> is what failed (logged).
    /// </summary>
    private void SetBackgroundError(Exception e, BackgroundJobKind operation)
    {
        if (_backgroundError == null)
        {
            _backgroundError = e;
            _backgroundErrorCount++;
            ScheduleAutomaticResume();
            _telemetry.BackgroundError(e, operation, _autoResumeScheduled);
        }
        foreach (ImmutableMemTable imm in _immutable)
        {
            imm.Flushed.TrySetException(Wrap(_backgroundError));
        }
        Monitor.PulseAll(_mutex);
    }

    /// <summary>Publishes a new read state from the current memtables and version. Holds _mutex.</summary>
    private void InstallReadState()
    {
        var imm = new MemTable[_immutable.Count];
        for (int i = 0; i < imm.Length; i++)
        {
            imm[i] = _immutable[_immutable.Count - 1 - i].Mem;
        }
        var next = new ReadState(_mem, imm, _versions.Current);
        ReadState old = Interlocked.Exchange(ref _readState, next);
        DropSpareIterators(); // they read the old state
        old.Unref();
    }

    /// <summary>Pins the current read state; lock-free (retries if it is retired meanwhile).</summary>
    private ReadState AcquireReadState()
    {
        while (true)
        {
            ReadState s = Volatile.Read(ref _readState);
            if (s.TryRef())
            {
                return s;
            }
        }
    }
}
