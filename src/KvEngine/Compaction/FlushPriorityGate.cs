namespace KvEngine.Compaction;

/// <summary>
/// Compactions give way to flushes (<see cref="KvOptions.CompactionsYieldToFlushes"/>): while a
/// flush holds the gate, a running compaction waits between two keys (it looks every
/// <see cref="CheckInterval"/> input keys) until no flush holds it. A flush's memtable stays
/// resident until its table is installed, and the next memtable grows meanwhile; on a machine
/// whose cores are all busy (writers, a flush and a compaction) the flush would get half a core
/// and take twice as long. A flush does not hold the gate when writes already wait on compactions
/// (a family's level 0 at its slowdown trigger; the flush runner decides), so compactions never
/// pause while they are what writes wait for.
/// <para>
/// Invariants: <c>_holders</c> counts the flushes holding the gate (each <see cref="Hold"/> is
/// matched by one <see cref="Release"/>); a waiting compaction is woken when it drops to 0.
/// Nothing a flush does waits for a compaction (it takes no lock a compaction holds while it
/// waits here), so a held gate is always released.
/// </para>
/// <para>
/// Thread-safety: any thread. <see cref="IsHeld"/> is a volatile read; the rest takes one short lock.
/// </para>
/// </summary>
internal sealed class FlushPriorityGate
{
    /// <summary>Input keys between two looks at the gate: a volatile read per 256 keys.</summary>
    public const int CheckInterval = 256;

    // How long a waiting compaction sleeps before it looks at its cancellation again (closing).
    private const int CancellationPollMs = 50;

    private readonly object _lock = new();
    private int _holders;
    private long _holds;
    private long _waits;

    /// <summary>True while some flush holds the gate.</summary>
    public bool IsHeld => Volatile.Read(ref _holders) > 0;

    /// <summary>Flushes that held the gate.</summary>
    public long Holds => Volatile.Read(ref _holds);

    /// <summary>Times a compaction waited for a flush.</summary>
    public long Waits => Volatile.Read(ref _waits);

    /// <summary>A flush starts and holds the gate until <see cref="Release"/>.</summary>
    public void Hold()
    {
        lock (_lock)
        {
            _holders++;
            _holds++;
        }
    }

    /// <summary>A flush that held the gate is done (or failed).</summary>
    public void Release()
    {
        lock (_lock)
        {
            if (_holders <= 0)
            {
                throw new InvalidOperationException("The flush gate was released more often than held.");
            }
            if (--_holders == 0)
            {
                Monitor.PulseAll(_lock);
            }
        }
    }

    /// <summary>
    /// A compaction between two keys: waits while a flush holds the gate, or until
    /// <paramref name="cancel"/> is cancelled (then returns, and the compaction throws where it
    /// looks next).
    /// </summary>
    public void WaitWhileHeld(CancellationToken cancel)
    {
        lock (_lock)
        {
            if (_holders == 0)
            {
                return;
            }
            _waits++;
            while (_holders > 0 && !cancel.IsCancellationRequested)
            {
                Monitor.Wait(_lock, CancellationPollMs);
            }
        }
    }
}
