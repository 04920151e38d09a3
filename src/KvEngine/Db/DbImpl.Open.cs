using KvEngine.Format;
using KvEngine.Versions;
using Version = KvEngine.Versions.Version;
using KvEngine.Memtable;
using KvEngine.Storage;
using KvEngine.Util;
using KvEngine.Wal;

namespace KvEngine.Db;

/// <summary>Opening: lock, create or recover the MANIFEST, replay WALs, start a fresh WAL.</summary>
internal sealed partial class DbImpl
{
    private bool _compactAfterOpen; // best-efforts recovery adopted tables: compact everything once open
    private bool _recovered;        // Recover completed: only then may Close sweep unnamed files

    /// <summary>
    /// Opens the database with the column families <paramref name="families"/> names (null: the
    /// default family only). Every family the database has must be named (RocksDB's rule for a
    /// read-write open); a named family it lacks is created with
    /// <see cref="KvOptions.CreateMissingColumnFamilies"/>. A descriptor for "default" gives the
    /// default family's options instead of <paramref name="options"/>.
    /// </summary>
    public static DbImpl Open(string path, KvOptions options, IEnumerable<ColumnFamilyDescriptor>? families = null)
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
    /// The requested families other than default, validated and copied; a "default" descriptor's
    /// options go into <paramref name="options"/> (a copy), which is then validated.
    /// </summary>
    private static List<ColumnFamilyDescriptor> ParseDescriptors(KvOptions options, IEnumerable<ColumnFamilyDescriptor>? families)
    {
        var requested = new List<ColumnFamilyDescriptor>();
        var names = new HashSet<string>(StringComparer.Ordinal);
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
        options.Validate();
        return requested;
    }

    private static DbImpl OpenValidated(string dir, KvOptions options, List<ColumnFamilyDescriptor> families)
    {
        IFileSystem fs = options.FileSystem;
        bool exists = fs.DirectoryExists(dir) && fs.FileExists(FileNames.CurrentFile(dir));
        if (!exists && !options.CreateIfMissing)
        {
            throw new KvException($"Database '{dir}' does not exist and CreateIfMissing is false.");
        }
        if (exists && options.ErrorIfExists)
        {
            throw new KvException($"Database '{dir}' already exists and ErrorIfExists is true.");
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
        catch (LockHeldException e)
        {
            throw new KvException($"Database '{dir}' is in use by another instance (LOCK is held).", e);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new KvException($"Database '{dir}': the LOCK file could not be created or opened: {e.Message}", e);
        }

        DbImpl? db = null;
        try
        {
            db = new DbImpl(dir, options, dbLock);
            db.Recover(exists, families);
            db.WriteOptionsFile();
            db._scheduler.Start(options.MaxBackgroundJobs);
            if (db._compactAfterOpen)
            {
                db.CompactRange(db._default, null, null);
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

    private void Recover(bool exists, List<ColumnFamilyDescriptor> requested)
    {
        if (!exists)
        {
            // A leftover CURRENT-less directory may hold files of a failed creation: start clean.
            _versions.CreateNew();
            WriteIdentity();
        }
        bool bestEfforts = _options.BestEffortsRecovery;
        _versions.Recover(bestEfforts);
        List<ColumnFamilyDescriptor> missing = AttachFamilies(requested);
        ulong maxSequence = _versions.LastSequence;
        RecoveryDamage damage = RecoveryDamage.Find(_fs, _dir, _versions, checkTables: _options.ParanoidChecks || bestEfforts);
        if (damage.EditsLost)
        {
            if (!bestEfforts)
            {
                throw new KvCorruptionException(damage.Describe(_dir));
            }
            if (_versions.Families.Length > 1)
            {
                // Adopted tables would all join the default family: refuse rather than misplace data.
                throw new KvException(damage.Describe(_dir) +
                    " BestEffortsRecovery does not yet rebuild a database with several column families.");
            }
            // Level order no longer tells which version of a key is newer once tables are adopted.
            // The repair is committed at once, before a new WAL's record starts a clean MANIFEST:
            // from then on the adopted tables are named, so no sweep can delete them.
            var repair = new VersionEdit();
            _compactAfterOpen = BestEffortsRepair.Apply(damage, _fs, _dir, _default.TableOptions, repair, ref maxSequence) > 0;
            repair.LastSequence = maxSequence;
            _versions.LogAndApply(repair);
        }

        // Replay every WAL the MANIFEST does not yet cover, oldest first.
        List<ulong> logs = LogsToReplay(out _);
        List<ColumnFamilyData> families = LiveFamilies();
        var edits = new Dictionary<uint, VersionEdit>();
        bool outOfSpace = false;
        bool stop = ReplayLogs(logs, families, edits, ref maxSequence, ref outOfSpace);
        foreach (ColumnFamilyData cfd in families)
        {
            if (!cfd.Mem.IsEmpty && !outOfSpace && TryAddLevel0Table(cfd, edits[cfd.Id], ref outOfSpace))
            {
                ReplaceMemTable(cfd);
            }
        }
        // No room to write the recovered data to tables (a full disk): keep it in the memtables
        // and keep its logs, as RocksDB's avoid_flush_during_recovery does, so the database opens
        // and the data reaches tables at the first flush once there is space. Only when every log
        // replayed: after a point-in-time stop, new writes in a later log would become
        // unreachable behind the damaged one.
        if (outOfSpace && stop)
        {
            throw new KvException($"Database '{_dir}': no space to flush the recovered WAL data, and the WAL is damaged.");
        }
        bool keepLogs = outOfSpace && families.Exists(static f => !f.Mem.IsEmpty);

        // A fresh WAL for new writes; the MANIFEST records that older ones are no longer needed
        // (unless the recovered data is still only in them).
        _logNumber = _versions.NewFileNumber();
        OpenNewLog(_logNumber);
        _versions.SetLastSequence(maxSequence);
        _writeThread.InitializeSequences(maxSequence);
        var list = new List<VersionEdit>(families.Count + 1);
        foreach (ColumnFamilyData cfd in families)
        {
            VersionEdit edit = edits[cfd.Id];
            edit.LogNumber = Math.Max(cfd.Versions.LogNumber, keepLogs ? logs[0] : _logNumber);
            if (cfd.Id == ColumnFamilyVersions.DefaultId)
            {
                edit.PrevLogNumber = 0;
            }
            list.Add(edit);
        }
        list[^1].LastSequence = maxSequence;
        if (MinLogNumberToKeepEdit(list) is { } minLogEdit)
        {
            list.Add(minLogEdit);
        }
        _versions.LogAndApply(list);
        foreach (ColumnFamilyDescriptor d in missing)
        {
            CreateFamilyCore(d.Name, d.Options);
        }
        lock (_mutex)
        {
            foreach (ColumnFamilyData cfd in LiveFamilies())
            {
                cfd.InstallReadState();
            }
        }
        _recovered = true;
        DeleteObsoleteFiles(atOpen: true);
    }

    /// <summary>
    /// The WALs to replay, ascending: those at or above MinLogNumberToKeep (and the previous log).
    /// Every numbered file moves the file-number counter past it; <paramref name="anyWal"/> tells
    /// whether the directory holds any WAL at all.
    /// </summary>
    private List<ulong> LogsToReplay(out bool anyWal)
    {
        ulong minLog = _versions.MinLogNumberToKeep;
        var logs = new List<ulong>();
        anyWal = false;
        foreach (string name in _fs.GetChildren(_dir))
        {
            if (FileNames.TryParse(name, out DbFileType type, out ulong number))
            {
                _versions.MarkFileNumberUsed(number);
                anyWal |= type == DbFileType.Log;
                if (type == DbFileType.Log && (number >= minLog || number == _versions.PrevLogNumber))
                {
                    logs.Add(number);
                }
            }
        }
        logs.Sort();
        return logs;
    }

    /// <summary>
    /// Replays <paramref name="logs"/> into the memtables of <paramref name="families"/> (filling
    /// <paramref name="edits"/>, one per family, with the level-0 tables a full memtable became),
    /// stopping at a damaged record as the recovery mode says (true then).
    /// </summary>
    private bool ReplayLogs(List<ulong> logs, List<ColumnFamilyData> families, Dictionary<uint, VersionEdit> edits, ref ulong maxSequence, ref bool outOfSpace)
    {
        foreach (ColumnFamilyData cfd in families)
        {
            edits[cfd.Id] = new VersionEdit { ColumnFamily = cfd.Id };
        }
        foreach (ulong logNumber in logs)
        {
            if (ReplayLog(logNumber, edits, ref maxSequence, ref outOfSpace))
            {
                ThrowIfFamilyAheadOfWals(families, logNumber);
                return true;
            }
        }
        return false;
    }

    /// <summary>
    /// Replay stopped inside WAL <paramref name="stoppedAt"/> (a damaged record, point-in-time or
    /// tolerate-tail recovery). A family whose tables already hold writes from a later WAL (its log
    /// number is past the damage and it has tables) would keep writes whose batches the other
    /// families lose: the database is not at any point in time, and RocksDB refuses it the same way
    /// ("SST file is ahead of WALs").
    /// </summary>
    private static void ThrowIfFamilyAheadOfWals(List<ColumnFamilyData> families, ulong stoppedAt)
    {
        foreach (ColumnFamilyData cfd in families)
        {
            Version v = cfd.Versions.Current;
            bool hasTables = false;
            for (int level = 0; level < Version.NumLevels && !hasTables; level++)
            {
                hasTables = v.NumFiles(level) > 0;
            }
            if (hasTables && cfd.Versions.LogNumber > stoppedAt)
            {
                throw new KvCorruptionException(
                    $"WAL {stoppedAt} is damaged, but column family '{cfd.Name}' holds in its tables writes from WAL {cfd.Versions.LogNumber} on " +
                    "(SST file is ahead of WALs): replaying up to the damage would split batches between families.");
            }
        }
    }

    /// <summary>
    /// Builds the engine's side of every family the MANIFEST records, with the requested options
    /// (RocksDB: every family must be named when opening read-write); returns the requested
    /// families the database lacks, to be created once the WALs are replayed.
    /// </summary>
    private List<ColumnFamilyDescriptor> AttachFamilies(List<ColumnFamilyDescriptor> requested)
    {
        var byName = new Dictionary<string, ColumnFamilyDescriptor>(StringComparer.Ordinal);
        foreach (ColumnFamilyDescriptor d in requested)
        {
            byName[d.Name] = d;
        }
        var notOpened = new List<string>();
        var attached = new List<ColumnFamilyData> { _default };
        foreach (ColumnFamilyVersions family in _versions.Families)
        {
            if (family.Id == ColumnFamilyVersions.DefaultId)
            {
                continue;
            }
            if (!byName.Remove(family.Name, out ColumnFamilyDescriptor? d))
            {
                if (!_readOnly) // RocksDB: a read-only open may name a subset of the families
                {
                    notOpened.Add(family.Name);
                }
                continue;
            }
            attached.Add(NewFamilyData(family, d.Options));
        }
        if (notOpened.Count > 0)
        {
            throw new ArgumentException(
                $"Database '{_dir}' has column families that were not named: {string.Join(", ", notOpened)} (every family must be opened; KvDb.ListColumnFamilies lists them).");
        }
        var missing = new List<ColumnFamilyDescriptor>(byName.Values);
        if (missing.Count > 0 && (_readOnly || !_options.CreateMissingColumnFamilies))
        {
            var names = missing.ConvertAll(static d => d.Name);
            throw new ArgumentException(_readOnly
                ? $"Database '{_dir}' has no column family {string.Join(", ", names)} (a read-only open cannot create one)."
                : $"Database '{_dir}' has no column family {string.Join(", ", names)} and CreateMissingColumnFamilies is false.");
        }
        PublishFamilies(attached);
        return missing;
    }

    /// <summary>Replays one WAL into the families' memtables; true when replay must stop here.</summary>
    private bool ReplayLog(ulong logNumber, Dictionary<uint, VersionEdit> edits, ref ulong maxSequence, ref bool outOfSpace)
    {
        string path = FileNames.LogFile(_dir, logNumber);
        var reporter = new RecoveryReporter();
        using ISequentialFile file = _fs.OpenSequential(path);
        using var scratch = new ByteBuffer(4096);
        var reader = new LogReader(file, _options.WalRecoveryMode, reporter, logNumber, verifyChecksums: true, fileName: path);
        ColumnFamilyData?[] families = _familiesById;
        while (reader.TryReadRecord(scratch, out ReadOnlySpan<byte> record))
        {
            // Validate the whole batch before applying any of it: a batch is atomic.
            WriteBatchDecoder.Validate(record);
            ulong first = CheckReplayedSequences(record, path, out uint count);
            var inserter = new MemTableInserter(families, first, concurrent: false, logNumber, refuseMerge: true);
            WriteBatchDecoder.Iterate(record, ref inserter);
            ulong last = first + count - 1;
            if (count > 0 && last > maxSequence)
            {
                maxSequence = last;
            }
            foreach (ColumnFamilyData? cfd in families)
            {
                if (cfd != null && !_readOnly && cfd.Mem.ApproximateMemoryUsage > cfd.Options.WriteBufferSize && !outOfSpace &&
                    TryAddLevel0Table(cfd, edits[cfd.Id], ref outOfSpace))
                {
                    ReplaceMemTable(cfd);
                }
            }
        }
        return reader.StoppedOnCorruption;
    }

    /// <summary>Recovery: the family's memtable went into a table; a new one takes its place.</summary>
    private static void ReplaceMemTable(ColumnFamilyData cfd)
    {
        MemTable old = cfd.Mem;
        cfd.Mem = cfd.NewMemTable();
        old.Unref();
    }

    /// <summary>
    /// The first sequence number of a validated WAL batch holding <paramref name="count"/> writes.
    /// A batch with writes may neither start at sequence 0 nor run past
    /// <see cref="InternalKeys.MaxSequenceNumber"/> (the memtable cannot hold such a sequence):
    /// <see cref="KvCorruptionException"/>.
    /// </summary>
    internal static ulong CheckReplayedSequences(ReadOnlySpan<byte> record, string path, out uint count)
    {
        ulong first = Coding.DecodeFixed64(record);
        count = Coding.DecodeFixed32(record[8..]);
        if (first == 0 && count > 0)
        {
            throw new KvCorruptionException($"{path}: a write batch carries sequence number 0.");
        }
        if (count > 0 && first > InternalKeys.MaxSequenceNumber - (count - 1))
        {
            throw new KvCorruptionException(
                $"{path}: a write batch of {count} writes at sequence {first} runs past the largest sequence number (2^56 - 1).");
        }
        return first;
    }

    /// <summary>
    /// Writes a recovered memtable to a level-0 table; false (and <paramref name="outOfSpace"/>
    /// set) when the device is full, so recovery keeps the data in memory instead.
    /// </summary>
    private bool TryAddLevel0Table(ColumnFamilyData cfd, VersionEdit edit, ref bool outOfSpace)
    {
        FileMetaData? meta;
        try
        {
            meta = BuildTable(cfd, cfd.Mem);
        }
        catch (Exception e) when (StorageErrors.IsNoSpace(e))
        {
            outOfSpace = true;
            return false;
        }
        if (meta != null)
        {
            edit.AddFile(0, meta);
        }
        return true;
    }

    private void WriteIdentity()
    {
        string path = FileNames.IdentityFile(_dir);
        using (IWritableFile f = _fs.CreateWritable(path))
        {
            f.Append(System.Text.Encoding.ASCII.GetBytes(Guid.NewGuid().ToString() + "\n"));
            f.Sync();
        }
        _fs.SyncDirectory(_dir);
    }

    /// <summary>
    /// Starts WAL <paramref name="number"/> for new writes. The old log was synced by the caller,
    /// so closing it writes nothing; with <paramref name="abandonOld"/> (resuming after an error)
    /// it may not be writable, and a failure to close it is ignored.
    /// </summary>
    private void OpenNewLog(ulong number, bool abandonOld = false)
    {
        IWritableFile file = _fs.CreateLogFile(FileNames.LogFile(_dir, number), _options.MemoryMappedWal);
        try
        {
            // Durable name first, then the MANIFEST's record of it, then writes: a WAL the
            // MANIFEST tracks exists unless later edits were lost (RecoveryDamage).
            _fs.SyncDirectory(_dir);
            _versions.LogWalAddition(number);
        }
        catch
        {
            file.Dispose();
            throw;
        }
        IWritableFile? old = _logFile;
        _logFile = file;
        _log = new LogWriter(file);
        Volatile.Write(ref _logFileFlushedSize, 0);
        if (!abandonOld)
        {
            old?.Dispose();
            return;
        }
        try
        {
            old?.Dispose();
        }
        catch (IOException)
        {
            // The abandoned log's handle is closed anyway; its contents are being flushed to tables.
        }
    }

    /// <summary>Receives what the WAL reader dropped during recovery.</summary>
    private sealed class RecoveryReporter : ILogReporter
    {
        public void Corruption(long bytesDropped, string reason, long fileOffset)
        {
            // Point-in-time and skip modes drop data by design; the reader already enforces the mode.
        }
    }
}
