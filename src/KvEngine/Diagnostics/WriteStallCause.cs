namespace KvEngine.Diagnostics;

/// <summary>Why writers waited (RocksDB's WriteStallCause and condition, flattened); a metric tag and log field, not persisted.</summary>
internal enum WriteStallCause
{
    /// <summary>Level 0 reached Level0SlowdownWritesTrigger files: the write group was delayed to hold KvOptions.DelayedWriteRate.</summary>
    Level0Slowdown,

    /// <summary>Level 0 reached Level0StopWritesTrigger files: writes stopped until a compaction.</summary>
    Level0Stop,

    /// <summary>MaxWriteBufferNumber memtables were full: writes stopped until a flush.</summary>
    MemTableLimit,
}
