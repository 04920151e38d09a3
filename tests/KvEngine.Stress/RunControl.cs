namespace KvEngine.Stress;

/// <summary>
/// Shared by the worker threads of one run: the stop request and its reason (the first one wins),
/// the global operation count, and the operation number at which the simulated power loss hits
/// (<see cref="long.MaxValue"/>: none). Thread-safe (interlocked).
/// </summary>
internal sealed class RunControl
{
    private int _reason = -1;
    private long _opsDone;
    private int _powerCut;

    public RunControl(long powerLossAt, Action? powerLoss)
    {
        PowerLossAt = powerLossAt;
        PowerLoss = powerLoss;
    }

    public long PowerLossAt { get; }

    public Action? PowerLoss { get; }

    public bool Stopped => Volatile.Read(ref _reason) >= 0;

    public StopReason Reason => Stopped ? (StopReason)_reason : StopReason.Completed;

    /// <summary>Whether the power was cut in this run (whatever stopped it first).</summary>
    public bool PowerLost => Volatile.Read(ref _powerCut) != 0;

    public void Stop(StopReason reason) => Interlocked.CompareExchange(ref _reason, (int)reason, -1);

    /// <summary>Counts one operation; the one that reaches <see cref="PowerLossAt"/> cuts the power.</summary>
    public void OperationDone()
    {
        if (Interlocked.Increment(ref _opsDone) == PowerLossAt && PowerLoss != null)
        {
            Volatile.Write(ref _powerCut, 1);
            Stop(StopReason.PowerLoss);
            PowerLoss();
        }
    }
}
