namespace KvEngine.Storage.IO;

/// <summary>How <see cref="BlockReadEngines.Create"/> builds an engine. Not thread-safe; read once at creation.</summary>
internal sealed class BlockReadEngineOptions
{
    /// <summary>The engine wanted; <see cref="BlockReadEngineKind.Auto"/> by default.</summary>
    public BlockReadEngineKind Kind { get; set; } = BlockReadEngineKind.Auto;

    /// <summary>
    /// SQ ring entries asked of io_uring_setup (the kernel rounds up to a power of two, at most
    /// 32768), which is also the most reads the ring engine keeps in the kernel at once; more wait
    /// in its backlog.
    /// </summary>
    public uint RingEntries { get; set; } = 128;

    /// <summary>
    /// When nonzero, io_uring_setup is not called and is treated as having failed with this errno
    /// (tests of the fallback on a kernel that allows io_uring).
    /// </summary>
    public int SimulatedSetupErrno { get; set; }

    /// <summary>
    /// Where <see cref="BlockReadEngineKind.Auto"/> looks for a forced choice; null means the process
    /// environment. Tests pass their own.
    /// </summary>
    public Func<string, string?>? Environment { get; set; }
}
