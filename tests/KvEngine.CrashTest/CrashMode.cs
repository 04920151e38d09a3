namespace KvEngine.CrashTest;

/// <summary>What kvcrashtest does to kvstress.</summary>
internal enum CrashMode
{
    /// <summary>Run kvstress on disk and SIGKILL it at random times; each restart verifies.</summary>
    Kill,

    /// <summary>kvstress's in-process power-loss cycles (unsynced data dropped).</summary>
    PowerLoss,

    /// <summary>Power-loss cycles plus random I/O errors.</summary>
    Faults,

    /// <summary>kvstress on a FUSE file system (powercutfs) whose power is cut at random times: unsynced data and directory entries are dropped.</summary>
    PowerCut,
}
