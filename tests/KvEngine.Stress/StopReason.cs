namespace KvEngine.Stress;

/// <summary>Why a run of the worker threads ended.</summary>
internal enum StopReason
{
    Completed,
    PowerLoss,
    NeedRecovery,
    Failure,
}
