using KvEngine.Db.State;
using KvEngine.Diagnostics;

namespace KvEngine.Db.Errors;

/// <summary>
/// The resume sequence (RocksDB's DBImpl::ResumeImpl): leaves the background-error state that
/// <see cref="ErrorHandler"/> holds without reopening. One attempt waits for a failed flush still
/// finishing, switches every memtable to a fresh WAL (the old one may end in a torn record),
/// flushes every immutable memtable oldest first on the calling thread so nothing depends on the
/// abandoned logs, and only then clears the error; a failure on the way becomes the error that
/// stops the database.
/// <para>
/// Invariants: one attempt runs at a time (the resume gate); while it runs the error stays set, so
/// writers keep failing and background threads pick no job, and <see cref="ErrorHandler.Resuming"/>
/// lets only the attempt's own memtable switch through the write queue.
/// </para>
/// <para>
/// Thread-safety and lock order: the resume gate, then the database mutex, which the attempt takes
/// for its short steps (never across a switch or a flush). Any thread, the automatic loop's included.
/// </para>
/// </summary>
internal sealed class ErrorRecovery
{
    private readonly object _resumeGate = new();
    private readonly DbMutex _mutex;
    private readonly ErrorHandler _errors;
    private readonly ColumnFamilySet _families;
    private readonly DbTelemetry _telemetry;
    private readonly Func<bool> _closing;
    private readonly IErrorRecoveryActions _actions;

    /// <param name="mutex">The database mutex.</param>
    /// <param name="errors">The error state the attempt clears or replaces.</param>
    /// <param name="families">Whose memtables the attempt flushes.</param>
    /// <param name="telemetry">Logs the outcome.</param>
    /// <param name="closing">True once the database is closing (no attempt runs then).</param>
    /// <param name="actions">The memtable switch and the flush, the database's own.</param>
    public ErrorRecovery(DbMutex mutex, ErrorHandler errors, ColumnFamilySet families, DbTelemetry telemetry, Func<bool> closing,
        IErrorRecoveryActions actions)
    {
        _mutex = mutex;
        _errors = errors;
        _families = families;
        _telemetry = telemetry;
        _closing = closing;
        _actions = actions;
    }

    /// <summary>One resume attempt; true when no error is left, false with the error that stopped it.</summary>
    public bool TryResume(out Exception? failure)
    {
        _mutex.AssertNotHeld();
        failure = null;
        lock (_resumeGate)
        {
            using (_mutex.Lock())
            {
                if (_errors.Error == null)
                {
                    return true;
                }
                if (_closing() || _errors.Error is KvCorruptionException)
                {
                    failure = _errors.Error;
                    return false;
                }
                // A flush that failed is still finishing on its background thread.
                while (_families.AnyFlushRunning())
                {
                    _mutex.Wait();
                }
                _errors.BeginResume();
            }
            try
            {
                _actions.SwitchToFreshWal();
                FlushAllThenClear();
            }
            catch (Exception e) when (e is IOException or KvException or UnauthorizedAccessException)
            {
                using (_mutex.Lock())
                {
                    _errors.EndResume(e);
                }
                _telemetry.ResumeFailed(e);
                failure = e;
                return false;
            }
        }
        return true;
    }

    /// <summary>Flushes every immutable memtable, oldest first, then clears the error under the mutex.</summary>
    private void FlushAllThenClear()
    {
        int flushed = 0;
        while (true)
        {
            ImmutableMemTable next;
            ColumnFamilyData? family = null;
            using (_mutex.Lock())
            {
                foreach (ColumnFamilyData cfd in _families.All())
                {
                    if (cfd.Immutable.Count > 0)
                    {
                        family = cfd;
                        break;
                    }
                }
                if (family == null)
                {
                    _errors.EndResume(null);
                    _telemetry.Resumed(flushed);
                    return;
                }
                next = family.Immutable[0];
                next.RenewFlushedIfFailed();
                family.StartFlush([next]);
            }
            try
            {
                _actions.FlushAndInstall(family, next);
                flushed++;
            }
            finally
            {
                _actions.EndFlush(family);
            }
        }
    }
}
