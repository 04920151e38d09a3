using KvEngine.Storage;

namespace KvEngine;

/// <summary>
/// Options for opening a database: the database-wide settings (RocksDB's DBOptions) and, inherited
/// from <see cref="ColumnFamilyOptions"/>, those of the default column family. Names and defaults
/// follow RocksDB's Options and BlockBasedTableOptions. An instance may be shared by several
/// opens; the database copies what it needs at open and validates it
/// (<see cref="ArgumentException"/> for values out of range).
/// </summary>
public sealed class KvOptions : ColumnFamilyOptions
{
    // Null until set: then MemoryMappedWal follows WalRecoveryMode (see its comment).
    private bool? _memoryMappedWal;

    /// <summary>Create the database when the directory holds none (RocksDB: create_if_missing).</summary>
    public bool CreateIfMissing { get; set; } = true;

    /// <summary>Fail to open when a database already exists (RocksDB: error_if_exists).</summary>
    public bool ErrorIfExists { get; set; }

    /// <summary>
    /// How long a writer queued behind a group-commit leader spins (SpinWait iterations, with
    /// yields) before it sleeps until woken (100; 0 sleeps at once). RocksDB's write thread spins
    /// likewise (enable_write_thread_adaptive_yield).
    /// </summary>
    public int WriteThreadSpinIterations { get; set; } = 100;

    /// <summary>
    /// Writers of one commit group insert their own batches into the memtable at the same time
    /// instead of the group's leader inserting all of them (RocksDB's
    /// allow_concurrent_memtable_write, default true). Only writers still spinning when the
    /// leader hands out the work take part; the leader inserts the rest.
    /// </summary>
    public bool AllowConcurrentMemtableWrite { get; set; } = true;

    /// <summary>
    /// Write the write-ahead log through a memory mapping (64-bit Linux; a plain file elsewhere):
    /// an acknowledged write is a copy into the page cache instead of a write(2) system call, so
    /// it survives a process kill exactly as before, and <see cref="WriteOptions.Sync"/> makes it
    /// durable with the same fdatasync. The log grows by reserved 1 MiB steps (a full disk shows at
    /// the reservation, as a failed write); a crash leaves the reserved rest of the last step as
    /// zeros, which RocksDB's tools and KvEngine read as preallocated space. RocksDB always writes
    /// its log with write(2) (it turns allow_mmap_writes off for log files).
    /// <para>
    /// A process killed in the middle of a copy can leave that one unacknowledged record torn
    /// before the zeros. (With write(2) the kernel makes the copy, and a kill can cut it short only
    /// between the pages of a write of several pages: RocksDB's exposure, far narrower.) Every
    /// recovery mode takes such a record for the end of the log, except
    /// <see cref="WalRecoveryMode.AbsoluteConsistency"/>, which by definition refuses any
    /// incomplete tail record: with the mapping, an ordinary kill could leave a database that
    /// mode will not open. Hence the default depends on the mode: unless set, this is true, and
    /// false when <see cref="WalRecoveryMode"/> is AbsoluteConsistency (the log is then written
    /// with write(2), as RocksDB writes it). Setting it to true together with AbsoluteConsistency
    /// is a contradiction that <see cref="KvDb.Open(string, KvOptions)"/> refuses with
    /// <see cref="ArgumentException"/>, as RocksDB refuses contradictory options with
    /// InvalidArgument.
    /// </para>
    /// </summary>
    public bool MemoryMappedWal
    {
        get => _memoryMappedWal ?? WalRecoveryMode != WalRecoveryMode.AbsoluteConsistency;
        set => _memoryMappedWal = value;
    }

    /// <summary>How a damaged write-ahead log is treated at open (RocksDB's wal_recovery_mode).</summary>
    public WalRecoveryMode WalRecoveryMode { get; set; } = WalRecoveryMode.PointInTimeRecovery;

    /// <summary>
    /// At open, check that every table the MANIFEST lists exists with its recorded size (RocksDB:
    /// paranoid_checks, true); without it a missing table fails at its first read instead.
    /// </summary>
    public bool ParanoidChecks { get; set; } = true;

    /// <summary>
    /// Open a database whose MANIFEST lost edits by rebuilding it from the files present (RocksDB:
    /// best_efforts_recovery, false). KvEngine records every WAL it creates in the MANIFEST, so a
    /// damaged or truncated MANIFEST is noticed at open: a WAL it records as live is gone, or a
    /// record cannot be read. Without this option such an open throws
    /// <see cref="KvCorruptionException"/> (RocksDB 7.8 opens and silently brings back deleted
    /// values and loses keys). With it, the open reads the MANIFEST up to the damage, drops the
    /// tables it names that are missing or truncated, adopts the unnamed tables the lost edits had
    /// written (level 0, then a full compaction puts every version in order), moves unreadable
    /// files to a <c>lost</c> folder, and replays the WALs. Writes whose only copy was in a lost
    /// file stay lost, and a deletion whose tombstone was already compacted away may return.
    /// </summary>
    public bool BestEffortsRecovery { get; set; }

    /// <summary>
    /// How many times the database retries by itself after a retryable background error (no space
    /// on the device) before it waits for <see cref="KvDb.Resume"/> (RocksDB's
    /// max_bgerror_resume_count: unlimited by default; 0 turns automatic recovery off).
    /// </summary>
    public int MaxBackgroundErrorResumeCount { get; set; } = int.MaxValue;

    /// <summary>Wait between automatic recovery attempts (RocksDB's bgerror_resume_retry_interval, 1 s).</summary>
    public TimeSpan BackgroundErrorResumeRetryInterval { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// Counters under RocksDB's ticker names; null (the default) keeps none. The meter's counters of
    /// reads, writes, bytes and block-cache hits and misses are read from it
    /// (<see cref="MeterFactory"/>), so they report nothing for a database without one.
    /// </summary>
    public KvStatistics? Statistics { get; set; }

    /// <summary>
    /// Caps the rate at which flushes and compactions write their table files (RocksDB's
    /// rate_limiter, null by default: unlimited, at no cost). Flushes are charged at
    /// <see cref="KvIOPriority.High"/>, compactions at <see cref="KvIOPriority.Low"/>; the
    /// write-ahead log is never charged. One limiter may be shared by several databases (they
    /// share its rate). Closing the database cancels its jobs' waits, except that of the flush
    /// <see cref="KvDb.Close"/> runs to persist writes made without the log, which completes at
    /// the limiter's rate (as in RocksDB). Not recorded in the OPTIONS file, as in RocksDB 7.8.
    /// </summary>
    public KvRateLimiter? RateLimiter { get; set; }

    /// <summary>
    /// Creates the database's <see cref="System.Diagnostics.Metrics.Meter"/>, named
    /// <see cref="KvEngineDiagnostics.MeterName"/> ("KvEngine"), as the host's
    /// <see cref="System.Diagnostics.Metrics.IMeterFactory"/> (from dependency injection) does for
    /// every library; the factory owns that meter. Null (the default): the database creates a plain
    /// "KvEngine" meter itself and disposes it when it closes. Either way the instruments
    /// (counters of flushes, compactions, bytes and stall time; histograms of flush, compaction and
    /// stall durations; gauges of memtable, block-cache and per-level sizes; and, with
    /// <see cref="Statistics"/>, counters of reads, writes and block-cache hits and misses) carry
    /// the tag <see cref="KvEngineDiagnostics.DbNamespaceTag"/> = the database's full path. None of them
    /// adds work to Get or Put: counters are read from the statistics when a listener collects.
    /// </summary>
    public System.Diagnostics.Metrics.IMeterFactory? MeterFactory { get; set; }

    /// <summary>
    /// Receives the events RocksDB writes to its LOG file — flushes, compactions, write stalls,
    /// background errors and resumes — under the category
    /// <see cref="KvEngineDiagnostics.LoggerCategory"/> ("KvEngine"), with structured fields (job
    /// id, levels, files, bytes, duration). Null (the default) logs nothing.
    /// </summary>
    public Microsoft.Extensions.Logging.ILoggerFactory? LoggerFactory { get; set; }

    /// <summary>
    /// The clock of the database (RocksDB's Env clock): the times table files record
    /// (oldest_ancester_time, file_creation_time, the creation_time properties) and the ages
    /// <see cref="ColumnFamilyOptions.Ttl"/> and <see cref="ColumnFamilyOptions.PeriodicCompactionSeconds"/>
    /// compare them with. <see cref="TimeProvider.System"/> by default; a test may pass its own
    /// to age files without waiting.
    /// </summary>
    public TimeProvider TimeProvider { get; set; } = TimeProvider.System;

    /// <summary>Background threads running flushes and compactions (RocksDB: max_background_jobs, 2).</summary>
    public int MaxBackgroundJobs { get; set; } = 2;

    /// <summary>Bytes of compressed secondary cache under the default per-database block cache; 0 for none.</summary>
    public long CompressedSecondaryCacheSize { get; set; }

    /// <summary>Compression of the default cache's secondary tier: LZ4 (RocksDB's default), Zstd or None.</summary>
    public KvCompressionType CompressedSecondaryCacheCompression { get; set; } = KvCompressionType.Lz4;

    /// <summary>Cut the default cache's secondary entries into allocator size-class chunks (true; PR 10287).</summary>
    public bool CompressedSecondaryCacheSplit { get; set; } = true;

    /// <summary>
    /// Table files kept open (RocksDB: max_open_files): -1 (the default) keeps all open; otherwise
    /// at least 20 (smaller values are raised to 20, as RocksDB does) and max_open_files - 10 table
    /// files stay open while idle; the least recently read are closed and reopened on demand.
    /// </summary>
    public int MaxOpenFiles { get; set; } = -1;

    /// <summary>
    /// Create the column families named at open that the database lacks (RocksDB:
    /// create_missing_column_families, false: such an open fails).
    /// </summary>
    public bool CreateMissingColumnFamilies { get; set; }

    /// <summary>
    /// Flush every column family with data together whenever one is flushed, recorded as one
    /// atomic MANIFEST group, so the families' tables always reflect the same point in time even
    /// with the WAL disabled (RocksDB: atomic_flush, false).
    /// </summary>
    public bool AtomicFlush { get; set; }

    /// <summary>
    /// With several column families, once the live WALs pass this many bytes the families whose
    /// unflushed data keeps the oldest WAL alive are flushed (RocksDB: max_total_wal_size; 0, the
    /// default, means 4 x the sum over families of write buffer size x max write buffer number).
    /// </summary>
    public long MaxTotalWalSize { get; set; }

    /// <summary>
    /// Bytes per second writes are held to while a column family is past its
    /// <see cref="ColumnFamilyOptions.Level0SlowdownWritesTrigger"/> (RocksDB: delayed_write_rate,
    /// 16 MiB/s when unset).
    /// </summary>
    public long DelayedWriteRate { get; set; } = 16L << 20;

    /// <summary>
    /// Read table files with direct I/O (O_DIRECT; RocksDB: use_direct_reads, false), bypassing the
    /// operating system's page cache: the block cache is then the only cache of table data, and
    /// the engine reads ahead itself (iterators' automatic readahead, compaction inputs'
    /// <see cref="CompactionReadaheadSize"/>). The WAL, MANIFEST and other files stay buffered, as in
    /// RocksDB. Linux only; opening fails with <see cref="KvException"/> when the database's file
    /// system refuses O_DIRECT (ramfs, some network file systems) or on another operating system.
    /// </summary>
    public bool UseDirectReads { get; set; }

    /// <summary>
    /// Write the table files of flushes and compactions with direct I/O (O_DIRECT; RocksDB:
    /// use_direct_io_for_flush_and_compaction, false): through an aligned 1 MiB buffer, the last
    /// partial sector written padded and the file cut to its true length when synced or closed.
    /// Background writes then do not fill the page cache. The WAL and MANIFEST stay buffered. Same
    /// platform and file-system conditions as <see cref="UseDirectReads"/>.
    /// </summary>
    public bool UseDirectIoForFlushAndCompaction { get; set; }

    /// <summary>
    /// Tell the operating system that table files are read at random offsets when they are opened
    /// for buffered reads (RocksDB: advise_random_on_open, true; POSIX_FADV_RANDOM on Linux), so a
    /// Get that misses the page cache reads only its block's pages, not a readahead window around
    /// them: on a database larger than memory that keeps the page cache for blocks that were asked
    /// for. Iterators and compactions read ahead themselves and are not slowed. No effect with
    /// <see cref="UseDirectReads"/> or on other operating systems.
    /// </summary>
    public bool AdviseRandomOnOpen { get; set; } = true;

    /// <summary>
    /// Bytes a compaction reads ahead of its position in each input table, in one read (RocksDB:
    /// compaction_readahead_size, 2 MiB): with direct I/O the kernel reads nothing ahead, and with
    /// buffered I/O one large read replaces many block-sized ones. 0 reads each block alone.
    /// </summary>
    public int CompactionReadaheadSize { get; set; } = 2 << 20;

    /// <summary>The file system: the operating system's unless a test substitutes one.</summary>
    internal IFileSystem FileSystem { get; set; } = LocalFileSystem.Instance;

    /// <summary>The engine asynchronous reads go through: the process's shared one (<see cref="Storage.IO.BlockReadEngines.Shared"/>) unless a test substitutes one.</summary>
    internal Storage.IO.IBlockReadEngine? BlockReadEngine { get; set; }

    /// <summary>
    /// The options a database was last opened with, from its newest <c>OPTIONS-NNNNNN</c> file
    /// (RocksDB's LoadLatestOptions; KvEngine writes that file at every open and family change, as RocksDB does):
    /// the database-wide options and the default column family's settings, so reopening with them
    /// keeps, for example, the compression new tables are written with. Options in the file that
    /// KvEngine has no counterpart for are ignored. Objects are not persisted: set
    /// <see cref="ColumnFamilyOptions.BlockCache"/>, <see cref="ColumnFamilyOptions.CompactionFilter"/>,
    /// <see cref="Statistics"/>, <see cref="LoggerFactory"/> and <see cref="MeterFactory"/> again.
    /// </summary>
    /// <param name="path">The database directory (written by KvEngine or by RocksDB).</param>
    /// <returns>A new instance; the caller may change it before opening.</returns>
    /// <exception cref="KvCorruptionException">The OPTIONS file is malformed.</exception>
    /// <exception cref="KvException">
    /// The directory holds no OPTIONS file, or the options need what KvEngine lacks (a comparator
    /// other than bytewise, a merge operator, another table format, codec or checksum).
    /// </exception>
    public static KvOptions LoadLatest(string path)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        return LoadLatestFamilies(path, LocalFileSystem.Instance).ToKvOptions();
    }

    /// <summary>
    /// <see cref="LoadLatest(string)"/> with the database's other column families (RocksDB's
    /// LoadLatestOptions with its family descriptors): open with
    /// <see cref="KvDb.Open(string, KvOptions, IEnumerable{ColumnFamilyDescriptor})"/> and
    /// <paramref name="columnFamilies"/> to reopen every family with the options it was written with.
    /// </summary>
    /// <param name="path">The database directory (written by KvEngine or by RocksDB).</param>
    /// <param name="columnFamilies">The families other than "default", in the file's order.</param>
    /// <returns>The database-wide options and the default family's settings.</returns>
    /// <exception cref="KvCorruptionException">The OPTIONS file is malformed.</exception>
    /// <exception cref="KvException">The directory holds no OPTIONS file, or a family needs what KvEngine lacks.</exception>
    public static KvOptions LoadLatest(string path, out IReadOnlyList<ColumnFamilyDescriptor> columnFamilies)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        OptionsFile.OptionsFileContents contents = LoadLatestFamilies(path, LocalFileSystem.Instance);
        KvOptions options = contents.ToKvOptions();
        var families = new List<ColumnFamilyDescriptor>(contents.Families.Count);
        foreach (OptionsFile.NamedColumnFamilyOptions f in contents.Families)
        {
            if (f.Name != "default")
            {
                families.Add(new ColumnFamilyDescriptor(f.Name, f.Options));
            }
        }
        columnFamilies = families;
        return options;
    }

    /// <summary>
    /// Every column family's options from the newest OPTIONS file (the family list LoadLatestOptions
    /// returns), "default" first; <see cref="OptionsFile.OptionsFileContents.DbOptions"/> holds the
    /// database-wide ones. Families needing a merge operator are returned as read, not refused.
    /// </summary>
    internal static OptionsFile.OptionsFileContents LoadLatestFamilies(string path, IFileSystem fileSystem)
    {
        string dir = Path.GetFullPath(path);
        try
        {
            return OptionsFile.OptionsFileStore.LoadLatest(fileSystem, dir);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new KvException($"Reading the OPTIONS file of '{dir}' failed: {e.Message}", e);
        }
    }

    internal KvOptions Clone()
    {
        var clone = (KvOptions)MemberwiseClone();
        clone.MetadataCacheOptions = MetadataCacheOptions?.Clone()!;
        clone.CompactionOptionsUniversal = CompactionOptionsUniversal?.Clone()!;
        return clone;
    }

    internal void Validate()
    {
        ValidateFamily();
        ArgumentOutOfRangeException.ThrowIfNegative(WriteThreadSpinIterations, nameof(WriteThreadSpinIterations));
        ArgumentOutOfRangeException.ThrowIfNegative(MaxBackgroundErrorResumeCount, nameof(MaxBackgroundErrorResumeCount));
        ArgumentOutOfRangeException.ThrowIfLessThan(BackgroundErrorResumeRetryInterval, TimeSpan.Zero, nameof(BackgroundErrorResumeRetryInterval));
        if (!Enum.IsDefined(WalRecoveryMode))
        {
            throw new ArgumentException($"Unknown WAL recovery mode {(int)WalRecoveryMode}.", nameof(WalRecoveryMode));
        }
        if (_memoryMappedWal == true && WalRecoveryMode == WalRecoveryMode.AbsoluteConsistency)
        {
            throw new ArgumentException(
                "MemoryMappedWal = true cannot be combined with WalRecoveryMode.AbsoluteConsistency: a process " +
                "killed in the middle of a copy into the mapped log leaves a torn last record, which " +
                "AbsoluteConsistency refuses at the next open. Leave MemoryMappedWal unset (it is then " +
                "false for this mode) or set it to false.",
                nameof(MemoryMappedWal));
        }
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxBackgroundJobs, 1, nameof(MaxBackgroundJobs));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(MaxBackgroundJobs, 64, nameof(MaxBackgroundJobs));
        ArgumentOutOfRangeException.ThrowIfNegative(CompressedSecondaryCacheSize, nameof(CompressedSecondaryCacheSize));
        ArgumentOutOfRangeException.ThrowIfNegative(MaxTotalWalSize, nameof(MaxTotalWalSize));
        ArgumentOutOfRangeException.ThrowIfLessThan(DelayedWriteRate, 1, nameof(DelayedWriteRate));
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxOpenFiles, -1, nameof(MaxOpenFiles));
        if (MaxOpenFiles == 0)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxOpenFiles), 0, "MaxOpenFiles is -1 (unlimited) or a positive count.");
        }
        if (CompressedSecondaryCacheCompression is not (KvCompressionType.None or KvCompressionType.Lz4 or KvCompressionType.Zstd))
        {
            throw new ArgumentException("The compressed secondary cache supports None, Lz4 and Zstd.", nameof(CompressedSecondaryCacheCompression));
        }
        ArgumentOutOfRangeException.ThrowIfNegative(CompactionReadaheadSize, nameof(CompactionReadaheadSize));
        ArgumentNullException.ThrowIfNull(FileSystem);
        ArgumentNullException.ThrowIfNull(TimeProvider, nameof(TimeProvider));
    }
}
