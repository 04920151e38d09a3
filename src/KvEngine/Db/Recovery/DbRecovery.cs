using KvEngine.Db.Background;
using KvEngine.Db.State;
using KvEngine.Storage;
using KvEngine.Versions;

namespace KvEngine.Db.Recovery;

/// <summary>
/// Recovery at open (RocksDB's DBImpl::Recover): creates a new database's first MANIFEST and
/// IDENTITY, recovers the MANIFEST, looks for lost edits and damaged tables before anything else
/// (<see cref="RecoveryDamage"/>: refused with nothing changed, or repaired with best-efforts
/// recovery), builds the engine's side of every family it records
/// (<see cref="ColumnFamilyData"/>, with the options the caller named), replays the WALs the
/// MANIFEST does not cover (<see cref="WalReplayer"/>) and writes what they held to level-0
/// tables. The opener then starts a fresh WAL and calls <see cref="Commit"/>, which records the
/// tables and the families' new log numbers in one MANIFEST write.
/// <para>
/// Invariants: every family the MANIFEST records is named by the caller (RocksDB's rule for a
/// read-write open; a read-only open may name a subset), or the open fails before anything is
/// written; a named family the database lacks is returned by <see cref="Recover"/> for the opener
/// to create once the WALs are replayed. The recovered data is in tables when <see cref="Commit"/>
/// returns, unless the device was full: then it stays in the memtables and the MANIFEST keeps the
/// WALs that hold it.
/// </para>
/// <para>Thread-safety: none needed; it runs on the opening thread before the database is shared.</para>
/// </summary>
internal sealed class DbRecovery
{
    private readonly string _dir;
    private readonly KvOptions _options;
    private readonly IFileSystem _fs;
    private readonly VersionSet _versions;
    private readonly ColumnFamilySet _families;
    private readonly Func<ColumnFamilyVersions, ColumnFamilyOptions, ColumnFamilyData> _newFamily;
    private readonly FlushRunner? _flusher;
    private WalReplayer? _replayer;
    private List<ulong> _logs = [];
    private bool _keepLogs;

    /// <param name="dir">The database directory.</param>
    /// <param name="options">The database's options (file system, recovery mode and checks).</param>
    /// <param name="versions">The version set to recover.</param>
    /// <param name="families">The family table, filled with the families the MANIFEST records.</param>
    /// <param name="newFamily">Builds the engine's side of a family the MANIFEST records.</param>
    /// <param name="flusher">Writes recovered memtables to tables; null for a read-only open, which writes nothing.</param>
    public DbRecovery(string dir, KvOptions options, VersionSet versions, ColumnFamilySet families,
        Func<ColumnFamilyVersions, ColumnFamilyOptions, ColumnFamilyData> newFamily, FlushRunner? flusher)
    {
        _dir = dir;
        _options = options;
        _fs = options.FileSystem;
        _versions = versions;
        _families = families;
        _newFamily = newFamily;
        _flusher = flusher;
    }

    private bool ReadOnly => _flusher == null;

    /// <summary>Best-efforts recovery adopted tables: the opener compacts everything once open.</summary>
    public bool CompactAfterOpen { get; private set; }

    /// <summary>The last sequence number recovered (valid after <see cref="Recover"/>).</summary>
    public ulong MaxSequence => _replayer!.MaxSequence;

    /// <summary>
    /// A read-write open's recovery up to the fresh WAL: see the type. <paramref name="exists"/>:
    /// the database has a CURRENT file. Returns the named families the database lacks.
    /// </summary>
    public List<ColumnFamilyDescriptor> Recover(bool exists, List<ColumnFamilyDescriptor> requested)
    {
        if (!exists)
        {
            // A leftover CURRENT-less directory may hold files of a failed creation: start clean.
            _versions.CreateNew();
            WriteIdentity();
        }
        bool bestEfforts = _options.BestEffortsRecovery;
        RecoveryDamage damage = RecoverManifest(bestEfforts, checkTables: _options.ParanoidChecks || bestEfforts, checkMissing: true, isNew: !exists);
        if (damage.Found && bestEfforts && _versions.Families.Length > 1)
        {
            // Adopted tables would all join the default family: refuse rather than misplace data.
            throw new KvCorruptionException(damage.Describe(_dir) +
                " (BestEffortsRecovery does not rebuild a database with several column families: nothing was changed.)");
        }
        List<(ulong, FileMetaData?)>? adopt = damage.Found ? BestEffortsRepair.ReadAdoptable(damage, _fs, _dir, _families.Default.TableOptions) : null;
        List<ColumnFamilyDescriptor> missing = AttachFamilies(requested);
        ulong maxSequence = _versions.LastSequence;
        if (adopt != null)
        {
            // Level order no longer tells which version of a key is newer once tables are adopted.
            // The repair is committed at once, before a new WAL's record starts a clean MANIFEST:
            // from then on the adopted tables are named, so no sweep can delete them.
            var repair = new VersionEdit();
            CompactAfterOpen = BestEffortsRepair.Apply(damage, adopt, _fs, _dir, repair, ref maxSequence) > 0;
            repair.LastSequence = maxSequence;
            _versions.LogAndApply(repair);
        }

        // Replay every WAL the MANIFEST does not yet cover, oldest first.
        _logs = WalReplayer.LogsToReplay(_fs, _dir, _versions, out _);
        _replayer = new WalReplayer(_dir, _fs, _options.WalRecoveryMode, _families, _flusher, maxSequence);
        bool stop = _replayer.Replay(_logs);
        _replayer.FlushMemTables();
        // No room to write the recovered data to tables (a full disk): keep it in the memtables
        // and keep its logs, as RocksDB's avoid_flush_during_recovery does, so the database opens
        // and the data reaches tables at the first flush once there is space.
        if (_replayer.OutOfSpace && stop)
        {
            DropDamagedTail();
        }
        _keepLogs = _replayer.OutOfSpace && _families.Live().Exists(static f => !f.Mem.IsEmpty);
        return missing;
    }

    /// <summary>
    /// Records the recovered tables and each family's log number once the opener started WAL
    /// <paramref name="newLogNumber"/>: older WALs are no longer needed (unless the recovered data
    /// is still only in them), with the last sequence number and MinLogNumberToKeep.
    /// </summary>
    public void Commit(ulong newLogNumber)
    {
        List<ColumnFamilyData> families = _families.Live();
        var list = new List<VersionEdit>(families.Count + 1);
        foreach (ColumnFamilyData cfd in families)
        {
            VersionEdit edit = _replayer!.EditOf(cfd);
            edit.LogNumber = Math.Max(cfd.Versions.LogNumber, _keepLogs ? _logs[0] : newLogNumber);
            if (cfd.Id == ColumnFamilyVersions.DefaultId)
            {
                edit.PrevLogNumber = 0;
            }
            list.Add(edit);
        }
        list[^1].LastSequence = MaxSequence;
        if (_families.MinLogNumberToKeepEdit(list) is { } minLogEdit)
        {
            list.Add(minLogEdit);
        }
        _versions.LogAndApply(list);
    }

    /// <summary>
    /// A read-only open's recovery (RocksDB's DBImplReadOnly): the MANIFEST, the named families,
    /// and the WALs replayed into memory only. <paramref name="errorIfWalFileExists"/> refuses a
    /// directory holding any WAL (RocksDB's error_if_wal_file_exists).
    /// </summary>
    public void RecoverReadOnly(List<ColumnFamilyDescriptor> requested, bool errorIfWalFileExists)
    {
        // A writer beside this instance may delete tables after the MANIFEST was read: only
        // ParanoidChecks looks for missing ones.
        RecoverManifest(bestEfforts: false, checkTables: _options.ParanoidChecks, checkMissing: _options.ParanoidChecks, isNew: false);
        AttachFamilies(requested);
        List<ulong> logs = WalReplayer.LogsToReplay(_fs, _dir, _versions, out bool anyWal);
        if (errorIfWalFileExists && anyWal)
        {
            throw new KvException(
                $"Database '{_dir}' was opened read-only with errorIfWalFileExists, but a WAL file exists (RocksDB: error_if_wal_file_exists).", KvStatusCode.InvalidArgument, KvStatusSubCode.None, null);
        }
        _replayer = new WalReplayer(_dir, _fs, _options.WalRecoveryMode, _families, flusher: null, _versions.LastSequence);
        _replayer.Replay(logs);
    }

    /// <summary>
    /// Recovers the MANIFEST and looks for lost edits and damaged tables before any family is
    /// attached: a family the lost edits created is damage, not a family the caller forgot to
    /// name. Refuses (<see cref="KvCorruptionException"/>, nothing changed) unless
    /// <paramref name="bestEfforts"/>; the caller repairs what is returned then. <paramref name="isNew"/>:
    /// the MANIFEST was just created in a directory without CURRENT, whose leftover files are a
    /// failed creation's, not evidence.
    /// </summary>
    private RecoveryDamage RecoverManifest(bool bestEfforts, bool checkTables, bool checkMissing, bool isNew)
    {
        // Listed before the MANIFEST is read: every table in the listing was recorded before it
        // was created, so the read covers it even while a writer runs beside a read-only open.
        IReadOnlyList<string> listed = isNew ? [] : _fs.GetChildren(_dir);
        _versions.Recover(bestEfforts);
        foreach (string name in listed)
        {
            if (FileNames.TryParse(name, out DbFileType _, out ulong number))
            {
                _versions.MarkFileNumberUsed(number); // a repair's MANIFEST write must not reuse a number on disk
            }
        }
        RecoveryDamage damage = RecoveryDamage.Find(_fs, _dir, _versions, listed, checkTables, checkMissing);
        if (damage.Found && !bestEfforts)
        {
            throw new KvCorruptionException(damage.Describe(_dir));
        }
        return damage;
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
        var attached = new List<ColumnFamilyData> { _families.Default };
        foreach (ColumnFamilyVersions family in _versions.Families)
        {
            if (family.Id == ColumnFamilyVersions.DefaultId)
            {
                continue;
            }
            if (!byName.Remove(family.Name, out ColumnFamilyDescriptor? d))
            {
                if (!ReadOnly) // RocksDB: a read-only open may name a subset of the families
                {
                    notOpened.Add(family.Name);
                }
                continue;
            }
            attached.Add(_newFamily(family, d.Options));
        }
        if (notOpened.Count > 0)
        {
            throw new ArgumentException(
                $"Database '{_dir}' has column families that were not named: {string.Join(", ", notOpened)} (every family must be opened; KvDb.ListColumnFamilies lists them).");
        }
        var missing = new List<ColumnFamilyDescriptor>(byName.Values);
        if (missing.Count > 0 && (ReadOnly || !_options.CreateMissingColumnFamilies))
        {
            var names = missing.ConvertAll(static d => d.Name);
            throw new ArgumentException(ReadOnly
                ? $"Database '{_dir}' has no column family {string.Join(", ", names)} (a read-only open cannot create one)."
                : $"Database '{_dir}' has no column family {string.Join(", ", names)} and CreateMissingColumnFamilies is false.");
        }
        _families.Publish(attached);
        return missing;
    }

    /// <summary>
    /// Point-in-time replay stopped inside a WAL and the logs are to be kept: the next open would
    /// stop at the same place and never reach the new WAL's writes. When the stop is in the
    /// newest WAL — typically the torn tail of an append a full disk cut short, never acknowledged
    /// — the bytes past its last complete record are dropped (a truncation needs no space; a
    /// recovery with space drops them too, with the whole WAL once flushed). A stop in an older
    /// WAL would cut off the WALs after it, which only a flush may make obsolete: refused.
    /// </summary>
    private void DropDamagedTail()
    {
        string path = FileNames.LogFile(_dir, _replayer!.StoppedLog);
        if (_replayer.StoppedLog != _logs[^1])
        {
            throw new KvException(
                $"Database '{_dir}': WAL {Path.GetFileName(path)} is damaged at offset {_replayer.StoppedLogValidLength} (point-in-time recovery stops there, " +
                $"dropping the WALs after it), and there is no space to write the recovered data to tables. Free space and open again.", KvStatusCode.IOError, KvStatusSubCode.NoSpace, null);
        }
        _fs.TruncateFile(path, _replayer.StoppedLogValidLength);
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
}
