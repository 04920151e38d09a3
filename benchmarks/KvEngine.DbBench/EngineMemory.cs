namespace KvEngine.DbBench;

/// <summary>
/// The memory an engine reports about itself at one moment, in bytes; -1 where it has no figure.
/// Memtables, table readers and block cache are RocksDB's properties of the same meaning
/// (<c>rocksdb.cur-size-all-mem-tables</c>, <c>rocksdb.estimate-table-readers-mem</c>,
/// <c>rocksdb.block-cache-usage</c>, <c>rocksdb.block-cache-pinned-usage</c>); the native allocator
/// figures are KvEngine's (<see cref="Memory.NativeAllocator.Shared"/>: bytes live in blocks, and
/// bytes its slabs and large blocks hold from the system; <see cref="NativeByUse"/>, the live usable
/// bytes per <see cref="Memory.NativeUse"/>), -1 for RocksDB, whose memory is malloc's. Immutable.
/// </summary>
internal readonly record struct EngineMemory(long MemTables, long TableReaders, long BlockCache, long BlockCachePinned, long NativeLive, long NativeResident,
    NativeUseBytes NativeByUse = default)
{
    /// <summary>Nothing known (the database is closed).</summary>
    public static EngineMemory Unknown { get; } = new(-1, -1, -1, -1, -1, -1);
}
