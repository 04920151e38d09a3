namespace KvEngine.Stress;

/// <summary>What <see cref="StressStats"/> counts; the summary prints them in this order.</summary>
internal enum StressCounter
{
    Put,
    /// <summary>Merge calls (-use_merge), alone or in a batch; each is also counted as its Put or WriteBatch.</summary>
    Merge,
    Delete,
    WriteBatch,
    DeleteRange,
    Get,
    GetSkippedConcurrent,
    PrefixScan,
    Iterate,
    IteratorSteps,
    SnapshotTaken,
    SnapshotVerified,
    Flush,
    CompactRange,
    StripeVerify,
    Checkpoint,
    Reopen,
    PowerLoss,
    KeysVerified,
    PendingResolved,
    UnsyncedWritesLost,
    UnsyncedWritesSurvived,
    InjectedErrorsSeen,
    WriteFailures,
    Resume,
    ResumeFailed,
    OpenFailed,
    /// <summary>Compactions of level 0 that reads asked for (the engine's count, added at every close).</summary>
    ReadTriggeredCompactions,
}
