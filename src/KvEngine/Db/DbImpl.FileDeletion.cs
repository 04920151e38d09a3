namespace KvEngine.Db;

/// <summary>
/// File-deletion control (RocksDB 7.8's DisableFileDeletions / EnableFileDeletions), for
/// checkpoints and external backups that copy the live files: the dispatch to
/// <see cref="Background.ObsoleteFileSweeper"/>, which holds the count and the deferred sweep.
/// </summary>
internal sealed partial class DbImpl
{
    /// <summary>
    /// Stops the deletion of obsolete files (RocksDB's DisableFileDeletions): every call adds one
    /// to a count, and files are deleted again only when <see cref="EnableFileDeletions"/> brings
    /// it back to zero. Returns when no deletion is in progress.
    /// </summary>
    public void DisableFileDeletions()
    {
        using CallScope call = EnterCall();
        ThrowIfReadOnly("DisableFileDeletions");
        _sweeper.Disable();
    }

    /// <summary>
    /// Undoes <see cref="DisableFileDeletions"/> (RocksDB 7.8's EnableFileDeletions):
    /// <paramref name="force"/> sets the count to zero, otherwise it goes down by one (never below
    /// zero). At zero the obsolete files kept meanwhile are deleted before this returns.
    /// Returns true when deletions are enabled afterwards.
    /// </summary>
    public bool EnableFileDeletions(bool force)
    {
        using CallScope call = EnterCall();
        ThrowIfReadOnly("EnableFileDeletions");
        if (!_sweeper.Enable(force, out bool sweep))
        {
            return false;
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
            if (!_sweeper.DeleteDeferredOptionsFiles())
            {
                return;
            }
        }
        _sweeper.TrySweep();
    }

    /// <summary>True while <see cref="DisableFileDeletions"/> holds deletions off.</summary>
    internal bool FileDeletionsDisabled => _sweeper.Disabled;
}
