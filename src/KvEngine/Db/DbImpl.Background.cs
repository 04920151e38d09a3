using KvEngine.Compaction;
using KvEngine.Db.Background;
using KvEngine.Db.State;

namespace KvEngine.Db;

/// <summary>
/// Dispatch of background work and manual compaction. A <see cref="BackgroundScheduler"/> thread
/// asks the <see cref="BackgroundJobPicker"/> for one job at a time (a flush first, else an
/// automatic compaction), run outside the mutex in its runner. Manual compactions run on the
/// caller's thread in the <see cref="CompactionRunner"/> after the family is flushed.
/// </summary>
internal sealed partial class DbImpl
{
    public EngineCounters Counters => _counters;

    /// <summary>The default family's compaction statistics.</summary>
    internal CompactionStatistics CompactionStats => _families.Default.CompactionStats;

    /// <summary>Stops background work: cancels running compactions, waits for manual ones, joins the threads.</summary>
    private void StopBackground()
    {
        _scheduler.Cancel();
        using (_mutex.Lock())
        {
            _closing = true;
            _mutex.PulseAll();
            _compactions.WaitForManualCompactions();
        }
        _scheduler.Shutdown();
    }

    /// <summary>
    /// Flushes the family's memtable, then compacts every level holding keys in [begin, end] (user
    /// keys, null = unbounded) down to the deepest such level (<see cref="CompactionRunner.CompactRange"/>).
    /// </summary>
    public void CompactRange(ColumnFamilyData cfd, byte[]? begin, byte[]? end)
    {
        using CallScope call = EnterCall();
        ThrowIfReadOnly("CompactRange");
        if (begin != null && end != null && begin.AsSpan().SequenceCompareTo(end) > 0)
        {
            throw new ArgumentException("The range's begin key is after its end key.", nameof(begin));
        }
        FlushCore([cfd], wait: true);
        _compactions.CompactRange(cfd, begin, end);
    }

    public ValueTask CompactRangeAsync(ColumnFamilyData cfd, byte[]? begin, byte[]? end, CancellationToken cancellationToken)
    {
        ThrowIfReadOnly("CompactRange");
        return new(Task.Run(() => CompactRange(cfd, begin, end), cancellationToken));
    }

    /// <summary>
    /// Compacts the files of <paramref name="level"/> overlapping [begin, end] into
    /// <paramref name="outputLevel"/> and nothing else (RocksDB's TEST_CompactRange), on this thread,
    /// in <paramref name="cfd"/> (the default family when null).
    /// </summary>
    internal void CompactLevel(int level, int outputLevel, byte[]? begin, byte[]? end, ColumnFamilyData? cfd = null)
    {
        using CallScope call = EnterCall();
        _compactions.CompactLevel(cfd ?? _families.Default, level, outputLevel, begin, end);
    }

    /// <summary>
    /// Runs the compactions the picker chooses, one after another on this thread, until no level
    /// needs one; returns how many ran (<see cref="CompactionRunner.RunInline"/>). In
    /// <paramref name="cfd"/>, the default family when null.
    /// </summary>
    internal int RunCompactionsInline(ColumnFamilyData? cfd = null)
    {
        using CallScope call = EnterCall();
        return _compactions.RunInline(cfd ?? _families.Default);
    }
}
