using System.Diagnostics;
using KvEngine.Compaction;
using KvEngine.Db.State;
using KvEngine.Diagnostics;

namespace KvEngine.Db.Write;

/// <summary>
/// The waits of a write group's leader before it writes (RocksDB's DelayWrite and the stop
/// conditions of WriteController): at a family's Level0StopWritesTrigger the group waits until a
/// compaction brings its level-0 file count down; at Level0SlowdownWritesTrigger it is delayed once
/// so writes go on at <see cref="KvOptions.DelayedWriteRate"/> (<see cref="WriteController"/>,
/// charged with the previous group's bytes as RocksDB does); with too many immutable memtables it
/// waits until a flush is done. Writers wait, never fail. Each wait logs the stall's start once per
/// group and adds its time to the stall counter; <see cref="End"/> reports the whole stall.
/// <para>
/// Thread-safety: every member holds the database mutex (the leader making room), and the waits
/// release it (<see cref="DbMutex.Wait(string)"/>), so a finished flush or compaction, which
/// pulses it, wakes the group early. The write controller and the last group's bytes are guarded
/// by the mutex.
/// </para>
/// </summary>
internal sealed class WriteStalls
{
    private readonly DbMutex _mutex;
    private readonly ColumnFamilySet _families;
    private readonly WriteController _controller;
    private readonly DbTelemetry _telemetry;
    private readonly EngineCounters _counters;
    private long _lastGroupBytes;

    public WriteStalls(DbMutex mutex, ColumnFamilySet families, long delayedWriteRate, DbTelemetry telemetry, EngineCounters counters)
    {
        _mutex = mutex;
        _families = families;
        _controller = new WriteController(delayedWriteRate);
        _telemetry = telemetry;
        _counters = counters;
    }

    /// <summary>Holds the mutex. The bytes of the last group formed, which the next delay is charged with.</summary>
    public long LastGroupBytes
    {
        set
        {
            _mutex.AssertHeld();
            _lastGroupBytes = value;
        }
    }

    /// <summary>
    /// Holds the mutex. Applies the level-0 stalls of every family whose auto compaction is on;
    /// true when the group waited (the caller looks again). <paramref name="delayed"/>: the group
    /// was already delayed once (a slowdown delays each group once).
    /// </summary>
    public bool Level0Stall(ref bool delayed, ref WriteStall stall)
    {
        _mutex.AssertHeld();
        foreach (ColumnFamilyData? cfd in _families.ById)
        {
            if (cfd == null || cfd.CompactionOptions.DisableAutoCompactions)
            {
                continue;
            }
            int level0 = cfd.Versions.Current.NumFiles(0);
            if (level0 >= cfd.CompactionOptions.Level0StopWritesTrigger)
            {
                Begin(WriteStallCause.Level0Stop, cfd, ref stall);
                long t0 = Stopwatch.GetTimestamp();
                _mutex.Wait(100);
                _counters.AddStall((long)Stopwatch.GetElapsedTime(t0).TotalMicroseconds);
                return true;
            }
            if (level0 >= cfd.CompactionOptions.Level0SlowdownWritesTrigger && !delayed)
            {
                delayed = true;
                TimeSpan delay = _controller.GetDelay(Math.Max(1, _lastGroupBytes), WriteController.NowMicros());
                if (delay <= TimeSpan.Zero)
                {
                    return false;
                }
                Begin(WriteStallCause.Level0Slowdown, cfd, ref stall);
                long t0 = Stopwatch.GetTimestamp();
                _mutex.Wait(delay); // the mutex is free meanwhile; a finished compaction wakes it early
                _counters.AddStall((long)Stopwatch.GetElapsedTime(t0).TotalMicroseconds);
                return true;
            }
        }
        return false;
    }

    /// <summary>
    /// Holds the mutex. <paramref name="crowded"/> has too many memtables waiting for a flush:
    /// waits until the mutex is pulsed (a flush done, a close, an error); the caller looks again.
    /// </summary>
    public void WaitForMemTableLimit(ColumnFamilyData crowded, ref WriteStall stall)
    {
        _mutex.AssertHeld();
        Begin(WriteStallCause.MemTableLimit, crowded, ref stall);
        long t0 = Stopwatch.GetTimestamp();
        _mutex.Wait();
        _counters.AddStall((long)Stopwatch.GetElapsedTime(t0).TotalMicroseconds);
    }

    /// <summary>Reports the group's stall, if it waited, as it goes on (or fails).</summary>
    public void End(in WriteStall stall)
    {
        if (stall.Started != 0)
        {
            _telemetry.WriteStallEnded(stall.Cause, Stopwatch.GetElapsedTime(stall.Started));
        }
    }

    /// <summary>Holds the mutex. Notes the start of a stall (its first wait) and logs it.</summary>
    private void Begin(WriteStallCause cause, ColumnFamilyData cfd, ref WriteStall stall)
    {
        _mutex.AssertHeld();
        if (stall.Started == 0)
        {
            stall.Started = Stopwatch.GetTimestamp();
            stall.Cause = cause;
            _telemetry.WriteStallStarted(cause, cfd.Versions.Current.NumFiles(0), cfd.Immutable.Count);
        }
    }
}
