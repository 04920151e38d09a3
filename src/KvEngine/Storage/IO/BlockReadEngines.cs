namespace KvEngine.Storage.IO;

/// <summary>
/// Builds the <see cref="IBlockReadEngine"/> for this process: io_uring when the kernel allows it,
/// the thread pool when io_uring_setup is refused (ENOSYS: no io_uring; EPERM: seccomp or
/// kernel.io_uring_disabled; ENOMEM: locked-memory limit) or when forced, by
/// <see cref="BlockReadEngineOptions.Kind"/> or by the environment variable
/// <c>KVENGINE_IO_ENGINE</c> (<c>io_uring</c>, <c>threadpool</c> or <c>auto</c>) when the kind is
/// <see cref="BlockReadEngineKind.Auto"/>. Stateless and thread-safe.
/// </summary>
internal static class BlockReadEngines
{
    public const string EnvironmentVariable = "KVENGINE_IO_ENGINE";

    private static IBlockReadEngine? s_shared;

    /// <summary>
    /// The process's engine for files not given one, as <see cref="Create"/> builds it with the
    /// defaults: set up on first use (a process that never reads asynchronously has no ring) and
    /// never disposed (its reaper is a background thread; the kernel tears the ring down at exit).
    /// </summary>
    public static IBlockReadEngine Shared => Volatile.Read(ref s_shared) ?? CreateShared();

    private static IBlockReadEngine CreateShared()
    {
        IBlockReadEngine engine = Create();
        IBlockReadEngine? won = Interlocked.CompareExchange(ref s_shared, engine, null);
        if (won != null)
        {
            engine.Dispose();
            return won;
        }
        return engine;
    }

    public static IBlockReadEngine Create(BlockReadEngineOptions? options = null)
    {
        options ??= new BlockReadEngineOptions();
        BlockReadEngineKind kind = options.Kind;
        if (kind == BlockReadEngineKind.Auto)
        {
            string? forced = (options.Environment ?? System.Environment.GetEnvironmentVariable)(EnvironmentVariable);
            kind = Parse(forced);
            if (kind == BlockReadEngineKind.ThreadPool)
            {
                return new ThreadPoolBlockReadEngine(EnvironmentVariable + "=" + forced);
            }
        }
        if (kind == BlockReadEngineKind.ThreadPool)
        {
            return new ThreadPoolBlockReadEngine();
        }
        if (options.RingEntries < 2)
        {
            throw new ArgumentOutOfRangeException(nameof(options), "The ring needs at least 2 entries.");
        }
        int errno = options.SimulatedSetupErrno;
        IoUringBlockReadEngine? ring = null;
        if (errno == 0)
        {
            errno = IoUringBlockReadEngine.TryCreate(options.RingEntries, out ring);
        }
        if (errno == 0)
        {
            return ring!;
        }
        string why = "io_uring_setup failed: " + BlockReadErrors.Describe(errno);
        if (kind == BlockReadEngineKind.IoUring)
        {
            throw new IOException(why, errno);
        }
        return new ThreadPoolBlockReadEngine(why);
    }

    private static BlockReadEngineKind Parse(string? value) => value?.Trim().ToLowerInvariant() switch
    {
        null or "" or "auto" => BlockReadEngineKind.Auto,
        "io_uring" or "iouring" => BlockReadEngineKind.IoUring,
        "threadpool" or "thread_pool" => BlockReadEngineKind.ThreadPool,
        _ => throw new ArgumentException(
            $"{EnvironmentVariable}='{value}' is not one of: auto, io_uring, threadpool."),
    };
}
