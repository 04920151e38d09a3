namespace KvEngine.Db;

/// <summary>
/// File-deletion control (RocksDB 7.8's DisableFileDeletions / EnableFileDeletions), for
/// checkpoints and external backups that copy the live files.
/// <para>
/// Invariant: while <see cref="_deletionsDisabled"/> is above zero no obsolete file is deleted —
/// no table, WAL, MANIFEST or OPTIONS file; each sweep asked for meanwhile is only remembered
/// (<see cref="_deletionsDeferred"/>) and runs when the count returns to zero. A sweep holds
/// <see cref="_sweepGate"/> from the moment it decides what to delete until it has deleted it, and
/// Disable takes the same gate: once Disable returns, no sweep that started before it is still
/// deleting. Lock order: <see cref="_sweepGate"/> before _mutex. Thread-safe.
/// </para>
/// </summary>
internal sealed partial class DbImpl
{
    private readonly object _sweepGate = new();
    private int _deletionsDisabled; // guarded by _sweepGate
    private bool _deletionsDeferred; // guarded by _sweepGate

    /// <summary>
    /// Stops the deletion of obsolete files (RocksDB's DisableFileDeletions): every call adds one
    /// to a count, and files are deleted again only when <see cref="EnableFileDeletions"/> brings
    /// it back to zero. Returns when no deletion is in progress.
    /// </summary>
    public void DisableFileDeletions()
    {
        ThrowIfDisposed();
        ThrowIfReadOnly("DisableFileDeletions");
        lock (_sweepGate)
        {
            _deletionsDisabled++;
        }
    }

    /// <summary>
    /// Undoes <see cref="DisableFileDeletions"/> (RocksDB 7.8's EnableFileDeletions):
    /// <paramref name="force"/> sets the count to zero, otherwise it goes down by one (never below
    /// zero). At zero the obsolete files kept meanwhile are deleted before this returns.
    /// Returns true when deletions are enabled afterwards.
    /// </summary>
    public bool EnableFileDeletions(bool force)
    {
        ThrowIfDisposed();
        ThrowIfReadOnly("EnableFileDeletions");
        bool sweep;
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
            if (_deletionsDisabled > 0)
            {
                return false;
            }
            sweep = _deletionsDeferred;
            _deletionsDeferred = false;
        }
        if (sweep)
        {
            SweepDeferred();
        }
        return true;
    }

    /// <summary>The deletions held back while file deletions were disabled: OPTIONS files, then the sweep.</summary>
    private void SweepDeferred()
    {
        lock (_familyGate) // serializes with OPTIONS writes (family creation and drop)
        {
            lock (_sweepGate)
            {
                if (_deletionsDisabled > 0)
                {
                    _deletionsDeferred = true;
                    return;
                }
                try
                {
                    OptionsFile.OptionsFileStore.DeleteObsolete(_fs, _dir);
                }
                catch (Exception e) when (e is IOException or UnauthorizedAccessException)
                {
                    // RocksDB ignores a failure to delete old OPTIONS files; the next write retries.
                }
            }
        }
        TryDeleteObsoleteFiles();
    }

    /// <summary>True while <see cref="DisableFileDeletions"/> holds deletions off.</summary>
    internal bool FileDeletionsDisabled
    {
        get
        {
            lock (_sweepGate)
            {
                return _deletionsDisabled > 0;
            }
        }
    }
}
