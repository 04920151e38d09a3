namespace KvEngine;

/// <summary>
/// What a <see cref="KvCompactionFilter"/> decides for one value during compaction (RocksDB's
/// CompactionFilter::Decision, the kKeep / kRemove / kChangeValue subset).
/// </summary>
public enum KvCompactionFilterDecision
{
    /// <summary>Write the value out unchanged (kKeep).</summary>
    Keep,

    /// <summary>
    /// Drop the value (kRemove): it becomes a deletion marker with the value's sequence number, or
    /// disappears entirely when nothing older of the key can exist below the compaction's output.
    /// Older versions of the key are never resurrected.
    /// </summary>
    Remove,

    /// <summary>Write the bytes the filter wrote into its buffer writer instead of the value (kChangeValue).</summary>
    ChangeValue,
}
