using KvEngine.Db.State;
using KvEngine.Storage;
using KvEngine.Versions;

namespace KvEngine.Db.Background;

/// <summary>
/// Deletes the tables, WALs, MANIFESTs and temp files nothing references (RocksDB's
/// FindObsoleteFiles / PurgeObsoleteFiles), and holds file deletion off while a checkpoint or
/// backup copies the live files (RocksDB 7.8's DisableFileDeletions / EnableFileDeletions).
/// <para>
/// Invariants: while the disable count is above zero no obsolete file is deleted — no table, WAL,
/// MANIFEST or OPTIONS file; each sweep asked for meanwhile is only remembered and runs when the
/// count returns to zero. A sweep holds the sweep gate from the moment it decides what to delete
/// until it has deleted it, and Disable takes the same gate: once Disable returns, no sweep that
/// started before it is still deleting. No table in the making is deleted: the pending outputs and
/// the next file number are read (under the database mutex) before the live versions, an output
/// leaves the pending set only after its version is installed, and a table numbered at or above
/// the next file number is being written by a job that started after this look (RocksDB's
/// min_pending_output rule). Only tables the MANIFEST accounts for are deleted: one numbered at or
/// above the next file number it records is not (every table is recorded there before it is
/// made, <see cref="VersionSet.RecordFileNumber"/>); below it, a table no live version names was
/// retired by an edit (compaction input, dropped family) or is an output whose edit never came (a
/// failed job, or a crash before the edit; the open refuses when the files prove lost edits
/// instead, see <c>RecoveryDamage</c>).
/// </para>
/// <para>
/// Lock order: the database's family gate, then the sweep gate, then the database mutex.
/// Thread-safe.
/// </para>
/// </summary>
internal sealed class ObsoleteFileSweeper
{
    private readonly object _sweepGate = new();
    private readonly DbMutex _mutex;
    private readonly string _dir;
    private readonly IFileSystem _fs;
    private readonly VersionSet _versions;
    private readonly ColumnFamilySet _families;
    private readonly PendingOutputs _pendingOutputs;
    private readonly Func<ulong> _oldestLiveWal;
    private int _deletionsDisabled; // guarded by _sweepGate
    private bool _deletionsDeferred; // guarded by _sweepGate

    /// <param name="mutex">The database mutex.</param>
    /// <param name="dir">The database directory.</param>
    /// <param name="fs">Its file system.</param>
    /// <param name="versions">The live tables, MANIFEST and log numbers.</param>
    /// <param name="families">Whose table caches forget a deleted table.</param>
    /// <param name="pendingOutputs">Tables being written.</param>
    /// <param name="oldestLiveWal">
    /// Called with the mutex held: the smallest WAL number still needed (the write path's
    /// current WAL or an older one a family still needs); older WALs are deleted.
    /// </param>
    public ObsoleteFileSweeper(DbMutex mutex, string dir, IFileSystem fs, VersionSet versions, ColumnFamilySet families,
        PendingOutputs pendingOutputs, Func<ulong> oldestLiveWal)
    {
        _mutex = mutex;
        _dir = dir;
        _fs = fs;
        _versions = versions;
        _families = families;
        _pendingOutputs = pendingOutputs;
        _oldestLiveWal = oldestLiveWal;
    }

    /// <summary>True while <see cref="Disable"/> holds deletions off.</summary>
    public bool Disabled
    {
        get
        {
            lock (_sweepGate)
            {
                return _deletionsDisabled > 0;
            }
        }
    }

    /// <summary>Adds one to the disable count; returns when no deletion is in progress.</summary>
    public void Disable()
    {
        lock (_sweepGate)
        {
            _deletionsDisabled++;
        }
    }

    /// <summary>
    /// Takes one from the disable count (never below zero), or sets it to zero with
    /// <paramref name="force"/>. True when deletions are enabled afterwards;
    /// <paramref name="sweepDeferred"/> tells whether sweeps were asked for meanwhile (the caller
    /// then runs <see cref="DeleteDeferredOptionsFiles"/> and <see cref="TrySweep"/>).
    /// </summary>
    public bool Enable(bool force, out bool sweepDeferred)
    {
        lock (_sweepGate)
        {
            if (force)
            {
                _deletionsDisabled = 0;
            }
            else if (_deletionsDisabled > 0)
            {
                _deletionsDisabled--;
            }
            sweepDeferred = false;
            if (_deletionsDisabled > 0)
            {
                return false;
            }
            sweepDeferred = _deletionsDeferred;
            _deletionsDeferred = false;
            return true;
        }
    }

    /// <summary>
    /// Runs <paramref name="write"/> (an OPTIONS file write) under the sweep gate, telling it
    /// whether it may delete older OPTIONS files; when it may not (deletions disabled), a sweep is
    /// remembered for <see cref="Enable"/>.
    /// </summary>
    public void WriteOptions(Action<bool> write)
    {
        lock (_sweepGate)
        {
            bool deleteObsolete = _deletionsDisabled == 0;
            _deletionsDeferred |= !deleteObsolete;
            write(deleteObsolete);
        }
    }

    /// <summary>
    /// The OPTIONS files held back while deletions were disabled (the caller holds the family
    /// gate, which serializes OPTIONS writes); false (and the sweep remembered again) when
    /// deletions were disabled again meanwhile.
    /// </summary>
    public bool DeleteDeferredOptionsFiles()
    {
        lock (_sweepGate)
        {
            if (_deletionsDisabled > 0)
            {
                _deletionsDeferred = true;
                return false;
            }
            try
            {
                OptionsFile.OptionsFileStore.DeleteObsolete(_fs, _dir);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                // RocksDB ignores a failure to delete old OPTIONS files; the next write retries.
            }
            return true;
        }
    }

    /// <summary>A sweep from a finally block: an I/O error leaves the files for the next sweep.</summary>
    public void TrySweep()
    {
        try
        {
            Sweep(atOpen: false);
        }
        catch (IOException)
        {
            // Retried at the next sweep (after the next flush or compaction, or at open).
        }
    }

    /// <summary>
    /// Deletes every file nothing references (temp files only at open, when no job can be writing
    /// one); with deletions disabled only remembers that a sweep is due.
    /// </summary>
    public void Sweep(bool atOpen)
    {
        lock (_sweepGate)
        {
            if (_deletionsDisabled > 0)
            {
                _deletionsDeferred = true; // Enable sweeps once the count is back at zero
                return;
            }
            SweepCore(atOpen);
        }
    }

    private void SweepCore(bool atOpen)
    {
        HashSet<ulong> live;
        List<ColumnFamilyData> families;
        ulong minLog;
        ulong firstUnallocated;
        using (_mutex.Lock())
        {
            live = _pendingOutputs.Copy();
            // A table at or above the next file number the MANIFEST as written records was not
            // made by this instance (it records a number before making the table): the MANIFEST
            // cannot account for it, so it is never deleted.
            firstUnallocated = Math.Min(_versions.NextFileNumberPeek, _versions.DurableNextFileNumber);
            // Never at or above what the MANIFEST as written still needs at open: an idle family's
            // in-memory log number may run ahead of it (a switch that advanced it after a flush
            // built its MinLogNumberToKeep edit), and a crash then would find tracked WALs gone.
            minLog = Math.Min(_oldestLiveWal(), _versions.RecordedMinLogNumberToKeep);
            families = _families.All();
        }
        live.UnionWith(_versions.LiveTableNumbers());
        ulong prevLog = _versions.PrevLogNumber;
        ulong manifest = _versions.ManifestFileNumber;
        foreach (string name in _fs.GetChildren(_dir))
        {
            if (!FileNames.TryParse(name, out DbFileType type, out ulong number))
            {
                continue;
            }
            bool keep = type switch
            {
                DbFileType.Log => number >= minLog || number == prevLog,
                DbFileType.Manifest => number >= manifest,
                DbFileType.Table => live.Contains(number) || number >= firstUnallocated,
                DbFileType.Temp => !atOpen,
                _ => true,
            };
            if (keep)
            {
                continue;
            }
            if (type == DbFileType.Table)
            {
                foreach (ColumnFamilyData cfd in families)
                {
                    cfd.Tables.Evict(number);
                }
            }
            try
            {
                _fs.DeleteFile(Path.Combine(_dir, name));
            }
            catch (IOException)
            {
                // Retried at the next sweep.
            }
        }
    }
}
