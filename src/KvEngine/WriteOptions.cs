namespace KvEngine;

/// <summary>Durability of one write (RocksDB's WriteOptions).</summary>
public sealed class WriteOptions
{
    internal static readonly WriteOptions Default = new();

    /// <summary>
    /// Make the log durable before acknowledging (fdatasync on Linux, as RocksDB; a full flush to
    /// disk elsewhere): the write survives power loss. Without it a write is in the operating
    /// system before it is acknowledged, so it survives a process crash.
    /// </summary>
    public bool Sync { get; set; }

    /// <summary>Skip the write-ahead log: the write is lost on a crash until a flush persists it.</summary>
    public bool DisableWal { get; set; }
}
