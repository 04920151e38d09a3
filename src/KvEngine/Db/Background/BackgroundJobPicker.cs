using KvEngine.Db.Errors;
using KvEngine.Db.State;

namespace KvEngine.Db.Background;

/// <summary>
/// What a <see cref="BackgroundScheduler"/> thread runs next (RocksDB's MaybeScheduleFlushOrCompaction
/// and the pick at the start of BackgroundFlush / BackgroundCompaction): under the database mutex,
/// with no background error and not closing, a flush if one is due (<see cref="FlushRunner.Pick"/>:
/// flushes come first, as RocksDB's high-priority pool), otherwise an automatic compaction
/// (<see cref="CompactionRunner.TryPickAutomatic"/>); the job then runs outside the mutex in its runner.
/// <para>
/// Invariants: a job is picked and registered with its runner in one hold of the mutex (so two
/// threads never pick the same memtables or files); nothing is picked once the database is closing
/// or while a background error is set (the error handler's resume wakes the scheduler when it clears).
/// </para>
/// Thread-safety: called by any number of scheduler threads at once; the mutex guards the pick,
/// the runners guard their own state (see theirs).
/// </summary>
internal sealed class BackgroundJobPicker : IBackgroundWorker
{
    private readonly DbMutex _mutex;
    private readonly Func<bool> _closing;
    private readonly ErrorHandler _errors;
    private readonly FlushRunner _flusher;
    private readonly CompactionRunner _compactions;
    private readonly ColumnFamilySet _families;

    /// <param name="mutex">The database mutex.</param>
    /// <param name="closing">True once the database is closing (set and read under the mutex).</param>
    /// <param name="errors">The background error: no job is picked while it is set.</param>
    /// <param name="flusher">Picks and runs flushes.</param>
    /// <param name="compactions">Picks and runs automatic compactions.</param>
    /// <param name="families">The families, for idle housekeeping.</param>
    public BackgroundJobPicker(DbMutex mutex, Func<bool> closing, ErrorHandler errors, FlushRunner flusher, CompactionRunner compactions,
        ColumnFamilySet families)
    {
        _families = families;
        _mutex = mutex;
        _closing = closing;
        _errors = errors;
        _flusher = flusher;
        _compactions = compactions;
    }

    /// <inheritdoc/>
    public bool TryRunJob()
    {
        List<(ColumnFamilyData Family, ImmutableMemTable[] Jobs)>? flush;
        PickedCompaction compaction = default;
        bool compact = false;
        using (_mutex.Lock())
        {
            if (_closing() || _errors.Error != null)
            {
                return false;
            }
            flush = _flusher.Pick();
            if (flush == null)
            {
                compact = _compactions.TryPickAutomatic(out compaction);
            }
        }
        if (flush != null)
        {
            _flusher.Run(flush);
            return true;
        }
        if (!compact)
        {
            return false;
        }
        _compactions.RunAutomatic(compaction);
        return true;
    }

    /// <inheritdoc/>
    public void OnIdle()
    {
        List<ColumnFamilyData> live;
        using (_mutex.Lock())
        {
            if (_closing())
            {
                return;
            }
            live = _families.Live();
        }
        foreach (ColumnFamilyData cfd in live)
        {
            // The clock per family: trimming the one before may take a while.
            cfd.TrimIdleMemTableSpares(Environment.TickCount64, (long)BackgroundScheduler.IdleCheckInterval.TotalMilliseconds);
        }
    }
}
