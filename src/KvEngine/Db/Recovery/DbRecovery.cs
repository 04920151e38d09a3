using KvEngine.Db.Background;
using KvEngine.Storage;
using KvEngine.Versions;

namespace KvEngine.Db.Recovery;

/// <summary>
/// Recovery at open (RocksDB's DBImpl::Recover): creates a new database's first MANIFEST and
/// IDENTITY, recovers the MANIFEST, builds the engine's side of every family it records
/// (<see cref="ColumnFamilyData"/>, with the options the caller named), looks for lost edits
/// (<see cref="RecoveryDamage"/>, repaired with best-efforts recovery), replays the WALs the
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
            CompactAfterOpen = BestEffortsRepair.Apply(damage, _fs, _dir, _families.Default.TableOptions, repair, ref maxSequence) > 0;
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
        // and the data reaches tables at the first flush once there is space. Only when every log
        // replayed: after a point-in-time stop, new writes in a later log would become
        // unreachable behind the damaged one.
        if (_replayer.OutOfSpace && stop)
        {
            throw new KvException($"Database '{_dir}': no space to flush the recovered WAL data, and the WAL is damaged.");
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
        _versions.Recover();
        AttachFamilies(requested);
        RecoveryDamage damage = RecoveryDamage.Find(_fs, _dir, _versions, checkTables: _options.ParanoidChecks);
        if (damage.EditsLost)
        {
            throw new KvCorruptionException(damage.Describe(_dir));
        }
        List<ulong> logs = WalReplayer.LogsToReplay(_fs, _dir, _versions, out bool anyWal);
        if (errorIfWalFileExists && anyWal)
        {
            throw new KvException(
                $"Database '{_dir}' was opened read-only with errorIfWalFileExists, but a WAL file exists (RocksDB: error_if_wal_file_exists).");
        }
        _replayer = new WalReplayer(_dir, _fs, _options.WalRecoveryMode, _families, flusher: null, _versions.LastSequence);
        _replayer.Replay(logs);
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
