namespace KvEngine.Storage.IO;

/// <summary>Which <see cref="IBlockReadEngine"/> <see cref="BlockReadEngines.Create"/> builds.</summary>
internal enum BlockReadEngineKind
{
    /// <summary>io_uring when the kernel allows it, else the thread pool (or what KVENGINE_IO_ENGINE names).</summary>
    Auto,

    /// <summary>io_uring only: creation fails with the errno when the kernel refuses it.</summary>
    IoUring,

    /// <summary>pread on thread-pool threads, on every platform.</summary>
    ThreadPool,
}
