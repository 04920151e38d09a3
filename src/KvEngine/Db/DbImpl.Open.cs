using KvEngine.Db.Recovery;
using KvEngine.Diagnostics;
using KvEngine.Db.State;
using KvEngine.Storage;
using KvEngine.Versions;

namespace KvEngine.Db;

/// <summary>
/// Opening: argument checks, the LOCK, recovery (<see cref="DbRecovery"/>), a fresh WAL, the
/// OPTIONS file and the background threads. Runs on the opening thread before the instance is shared.
/// </summary>
internal sealed partial class DbImpl
{
    private bool _compactAfterOpen; // best-efforts recovery adopted tables: compact everything once open
    private bool _recovered;        // Recover completed: only then may Close sweep unnamed files

    /// <summary>
    /// Opens the database with the column families <paramref name="families"/> names (null: the
    /// default family only, with <paramref name="options"/>). A list must name "default", whose
    /// descriptor gives the default family's options, and every family the database has (RocksDB's
    /// rules for a read-write open); a named family it lacks is created with
    /// <see cref="KvOptions.CreateMissingColumnFamilies"/>.
    /// </summary>
    public static DbImpl Open(string path, KvOptions options, IEnumerable<ColumnFamilyDescriptor>? families = null) =>
        Traced(path, readOnly: false, () => OpenUntraced(path, options, families));

    /// <summary>Runs <paramref name="open"/> inside a <see cref="DbActivities.Open"/> span (when anyone listens).</summary>
    private static DbImpl Traced(string path, bool readOnly, Func<DbImpl> open)
    {
        if (!DbActivities.Source.HasListeners())
        {
            return open();
        }
        using System.Diagnostics.Activity? activity = DbActivities.Start(DbActivities.Open, string.IsNullOrEmpty(path) ? string.Empty : Path.GetFullPath(path));
        activity?.SetTag("kvengine.read_only", readOnly);
        try
        {
            DbImpl db = open();
            if (activity != null)
            {
                activity.SetTag("kvengine.column_families", db._families.Live().Count);
                activity.SetTag("kvengine.last_sequence", db._versions.LastSequence);
            }
            return db;
        }
        catch (Exception e)
        {
            DbActivities.Failed(activity, e);
            throw;
        }
    }

    private static DbImpl OpenUntraced(string path, KvOptions options, IEnumerable<ColumnFamilyDescriptor>? families)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        ArgumentNullException.ThrowIfNull(options);
        options = options.Clone();
        List<ColumnFamilyDescriptor> requested = ParseDescriptors(options, families);
        string dir = Path.GetFullPath(path);
        try
        {
            return OpenValidated(dir, options, requested);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // KvDb.Open documents KvException for failures of its own files, as writes report them
            // (UnauthorizedAccessException: a directory or file the process may not create or write).
            throw new KvException($"Opening database '{dir}' failed: {e.Message}", e);
        }
    }

    /// <summary>
    /// The requested families other than default, validated and copied; the "default" descriptor's
    /// options go into <paramref name="options"/> (a copy), which is then validated. A list without
    /// "default" is refused (<see cref="ArgumentException"/>), as RocksDB refuses it.
    /// </summary>
    private static List<ColumnFamilyDescriptor> ParseDescriptors(KvOptions options, IEnumerable<ColumnFamilyDescriptor>? families)
    {
        var requested = new List<ColumnFamilyDescriptor>();
        var names = new HashSet<string>(StringComparer.Ordinal);
        if (families == null)
        {
            names.Add(ColumnFamilyVersions.DefaultName); // KvDb.Open(path, options): the default family, with options
        }
        foreach (ColumnFamilyDescriptor d in families ?? [])
        {
            ArgumentNullException.ThrowIfNull(d, nameof(families));
            if (!names.Add(d.Name))
            {
                throw new ArgumentException($"Column family '{d.Name}' is named twice.", nameof(families));
            }
            if (d.Name == ColumnFamilyVersions.DefaultName)
            {
                options.CopyFamilyFrom(d.Options);
            }
            else
            {
                ColumnFamilyOptions copy = d.Options.CloneFamily();
                copy.ValidateFamily();
                requested.Add(new ColumnFamilyDescriptor(d.Name, copy));
            }
        }
        if (!names.Contains(ColumnFamilyVersions.DefaultName))
        {
            // RocksDB's VersionSet::Recover: "Invalid argument: Default column family not specified".
            throw new ArgumentException(
                "Invalid argument: Default column family not specified: a list of column families must name \"default\" " +
                "(its descriptor's options are the default family's).", nameof(families));
        }
        options.Validate();
        return requested;
    }

    private static DbImpl OpenValidated(string dir, KvOptions options, List<ColumnFamilyDescriptor> families)
    {
        IFileSystem fs = options.FileSystem;
        bool exists = fs.DirectoryExists(dir) && fs.FileExists(FileNames.CurrentFile(dir));
        if (!exists && !options.CreateIfMissing)
        {
            throw new KvException($"Database '{dir}' does not exist and CreateIfMissing is false.", KvStatusCode.InvalidArgument, KvStatusSubCode.None, null);
        }
        if (exists && options.ErrorIfExists)
        {
            throw new KvException($"Database '{dir}' already exists and ErrorIfExists is true.", KvStatusCode.InvalidArgument, KvStatusSubCode.None, null);
        }
        if (!fs.DirectoryExists(dir))
        {
            fs.CreateDirectory(dir);
            string? parent = Path.GetDirectoryName(dir);
            if (parent != null)
            {
                fs.SyncDirectory(parent);
            }
        }

        IDisposable dbLock;
        try
        {
            dbLock = fs.LockFile(FileNames.LockFile(dir));
        }
        catch (KvLockHeldException e)
        {
            throw new KvLockHeldException($"Database '{dir}' is in use by another instance (LOCK is held).", e);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new KvException($"Database '{dir}': the LOCK file could not be created or opened: {e.Message}", e);
        }

        try
        {
            CheckDirectIO(dir, options, FileNames.LockFile(dir));
        }
        catch
        {
            dbLock.Dispose();
            throw;
        }

        DbImpl? db = null;
        try
        {
            db = new DbImpl(dir, options, dbLock);
            db.Recover(exists, families);
            db.LoadTableReaders();
            db.WriteOptionsFile();
            db._scheduler.Start(db._jobPicker, options.MaxBackgroundJobs);
            if (db._compactAfterOpen)
            {
                db.CompactRange(db._families.Default, null, null);
            }
            return db;
        }
        catch
        {
            if (db != null)
            {
                try
                {
                    db.Dispose();
                }
                catch (KvException)
                {
                    // The error that failed the open is the one to report; Dispose released the lock.
                }
            }
            else
            {
                dbLock.Dispose();
            }
            throw;
        }
    }

    /// <summary>
    /// With <see cref="KvOptions.MaxOpenFiles"/> = -1 (every table file kept open), opens the reader
    /// of every live table now, as RocksDB's VersionBuilder::LoadTableHandlers does at DB::Open:
    /// footer, index and filter read, range tombstones fragmented. The first reads after an open
    /// then pay only for data blocks, instead of each table's metadata on the first Get that
    /// reaches it (on a database larger than memory, hundreds of megabytes of index and filter
    /// blocks read inside the first reads). A damaged table fails the open here, naming the file,
    /// unless <see cref="KvOptions.ParanoidChecks"/> is off; a table the options cannot read (its
    /// merge operands without the operator) does not: in both cases its reads report it.
    /// Runs before the background threads start, with the mutex held, so no version changes under it.
    /// </summary>
    private void LoadTableReaders()
    {
        if (_options.MaxOpenFiles != -1)
        {
            return;
        }
        using (_mutex.Lock())
        {
            foreach (ColumnFamilyData cfd in _families.Live())
            {
                KvEngine.Versions.Version current = cfd.Versions.Current;
                for (int level = 0; level < KvEngine.Versions.Version.NumLevels; level++)
                {
                    foreach (KvEngine.Versions.FileMetaData file in current.LevelFiles(level))
                    {
                        try
                        {
                            cfd.Tables.Get(file, level);
                        }
                        catch (Exception e) when (e is KvException or IOException &&
                            !(_options.ParanoidChecks && e is KvCorruptionException or IOException))
                        {
                            // Without paranoid_checks, as RocksDB, a damaged table does not fail
                            // the open; nor does one the options cannot read (a merge operator
                            // missing for its operands): the reads that reach it report it.
                        }
                    }
                }
            }
        }
    }

    /// <summary>
    /// With direct I/O asked for, opens <paramref name="probeFile"/> (an existing file of the
    /// database's directory) with it: a file system that refuses O_DIRECT, or an operating system
    /// without it, fails the open here with <see cref="KvException"/> naming the directory and the
    /// option, rather than at the first flush or table read.
    /// </summary>
    private static void CheckDirectIO(string dir, KvOptions options, string probeFile)
    {
        if (!options.UseDirectReads && !options.UseDirectIoForFlushAndCompaction)
        {
            return;
        }
        try
        {
            options.FileSystem.CheckDirectIO(probeFile);
        }
        catch (NotSupportedException e)
        {
            string option = (options.UseDirectReads, options.UseDirectIoForFlushAndCompaction) switch
            {
                (true, true) => "UseDirectReads (use_direct_reads) and UseDirectIoForFlushAndCompaction (use_direct_io_for_flush_and_compaction) are",
                (true, false) => "UseDirectReads (use_direct_reads) is",
                _ => "UseDirectIoForFlushAndCompaction (use_direct_io_for_flush_and_compaction) is",
            };
            throw new KvNotSupportedException($"Database '{dir}': {option} set, but direct I/O is not available there: {e.Message}", e);
        }
    }

    /// <summary>
    /// Recovers the database (<see cref="DbRecovery"/>: MANIFEST, families, WAL replay into
    /// tables), starts a fresh WAL, records the recovery against it, creates the named families
    /// the database lacks, installs the read states and deletes what recovery made obsolete.
    /// </summary>
    private void Recover(bool exists, List<ColumnFamilyDescriptor> requested)
    {
        var recovery = new DbRecovery(_dir, _options, _versions, _families, NewFamilyData, _flusher);
        List<ColumnFamilyDescriptor> missing = recovery.Recover(exists, requested);
        _compactAfterOpen = recovery.CompactAfterOpen;

        // A fresh WAL for new writes; the MANIFEST records that older ones are no longer needed
        // (unless the recovered data is still only in them).
        ulong walNumber = _versions.NewFileNumber();
        _wals.Start(walNumber);
        _versions.SetLastSequence(recovery.MaxSequence);
        _writer.Thread.InitializeSequences(recovery.MaxSequence);
        recovery.Commit(walNumber);
        foreach (ColumnFamilyDescriptor d in missing)
        {
            CreateFamilyCore(d.Name, d.Options);
        }
        using (_mutex.Lock())
        {
            foreach (ColumnFamilyData cfd in _families.Live())
            {
                // Recovered memtables hold every write of their family from their first entry on
                // (the WAL is replayed from the family's log number); an empty one, every later write.
                foreach (ImmutableMemTable imm in cfd.Immutable)
                {
                    imm.Mem.EarliestSequence = imm.Mem.IsEmpty ? recovery.MaxSequence + 1 : imm.Mem.FirstSequence;
                }
                cfd.Mem.EarliestSequence = cfd.Mem.IsEmpty ? recovery.MaxSequence + 1 : cfd.Mem.FirstSequence;
                cfd.InstallReadState();
            }
        }
        _recovered = true;
        _sweeper.Sweep(atOpen: true);
    }
}
