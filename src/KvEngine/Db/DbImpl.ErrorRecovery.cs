using KvEngine.Db.Errors;
using KvEngine.Db.State;

namespace KvEngine.Db;

/// <summary>
/// Leaving the background-error state without reopening (RocksDB's DB::Resume): the dispatch to
/// <see cref="ErrorHandler"/>, which holds the error and runs the automatic retries, and
/// <see cref="ErrorRecovery"/>, which runs a resume over this type's <see cref="IErrorRecoveryActions"/>.
/// </summary>
internal sealed partial class DbImpl : IErrorRecoveryActions
{
    /// <summary>An automatic resume loop is running (for tests).</summary>
    internal bool AutomaticResumeRunning
    {
        get
        {
            using (_mutex.Lock())
            {
                return _errors.AutoResumeScheduled;
            }
        }
    }

    /// <summary>
    /// Clears a background error (RocksDB's DB::Resume). Does nothing when there is none.
    /// </summary>
    /// <exception cref="KvException">The database could not recover (the new error is inside), or the error is corruption.</exception>
    public void Resume()
    {
        using CallScope call = EnterCall();
        ThrowIfReadOnly("Resume");
        Exception? error;
        using (_mutex.Lock())
        {
            error = _errors.Error;
        }
        if (error is KvCorruptionException)
        {
            throw new KvWriteStoppedException("The database stopped on corruption, which Resume cannot repair: " + error.Message, error);
        }
        if (error != null && !TryResume(out Exception? failure))
        {
            throw ErrorHandler.Wrap(failure!);
        }
    }

    /// <summary>One resume attempt (also the automatic loop's step); false with the error that stopped it.</summary>
    private bool TryResume(out Exception? failure)
    {
        if (!_recovery.TryResume(out failure))
        {
            return false;
        }
        _scheduler.Wake(); // flushes and compactions that waited on the error may run now
        return true;
    }

    /// <summary>A resume's memtable switch through the write queue (it passes while the handler is resuming), to a fresh WAL.</summary>
    void IErrorRecoveryActions.SwitchToFreshWal() => _writer.SwitchMemTables(null);

    void IErrorRecoveryActions.FlushAndInstall(ColumnFamilyData family, ImmutableMemTable memTable) => _flusher.FlushAndInstall([(family, [memTable])]);

    void IErrorRecoveryActions.EndFlush(ColumnFamilyData family) => _flusher.EndFlush(family);
}
