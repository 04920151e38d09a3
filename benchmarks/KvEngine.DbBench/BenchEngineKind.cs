namespace KvEngine.DbBench;

/// <summary>kvbench's <c>-engine</c>: which storage engine the workloads run on.</summary>
internal enum BenchEngineKind
{
    /// <summary>KvEngine (the default).</summary>
    KvEngine,

    /// <summary>Release RocksDB through RocksDbSharp (the <c>RocksDB</c> NuGet package).</summary>
    RocksDb,

    /// <summary>ZoneTree, a managed LSM tree (the <c>ZoneTree</c> NuGet package).</summary>
    ZoneTree,

    /// <summary>LMDB, a memory-mapped B+tree, through LightningDB (the <c>LightningDB</c> NuGet package).</summary>
    Lmdb,
}
