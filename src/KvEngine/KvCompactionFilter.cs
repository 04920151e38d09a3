using System.Buffers;

namespace KvEngine;

/// <summary>
/// Lets the application keep, remove or rewrite values while compaction rewrites them (RocksDB's
/// CompactionFilter with FilterV2): set one in <see cref="ColumnFamilyOptions.CompactionFilter"/>. Typical uses
/// are expiry (drop values whose embedded deadline has passed) and garbage collection.
/// <para>
/// Which entries it sees: only values (never deletions or range tombstones, and never entries a range
/// tombstone already deletes), only the newest version of each user key in the compaction, and only
/// when no live snapshot can read that version (its sequence number is above the newest snapshot's):
/// a value a snapshot can still see is written out as is. Flushes never call the filter (as in
/// RocksDB); a value is filtered whenever a compaction rewrites it. With a filter set, the manual
/// compactions of <see cref="KvDb.CompactRange(byte[], byte[])"/> never move a file down a level without rewriting
/// it, and rewrite the deepest level of the range in place (RocksDB's default
/// bottommost_level_compaction, kIfHaveCompactionFilter): every value of the range passes through
/// the filter. Automatic compactions filter what they rewrite; their trivial moves skip it.
/// </para>
/// <para>
/// Snapshots: RocksDB 7.8 always ignores them here; KvEngine keeps the stricter semantics of
/// RocksDB's former IgnoreSnapshots() == false, so snapshot reads stay repeatable.
/// </para>
/// <para>
/// Thread-safety: one instance is shared by every compaction of the database, and compactions run
/// concurrently on the background threads and on callers of <see cref="KvDb.CompactRange(byte[], byte[])"/>: the
/// implementation must be thread-safe. It runs on the compaction's per-key path, so it should not
/// block or allocate. An exception thrown by it fails the compaction, whose outputs are deleted, and
/// becomes the database's background error (writes then fail until the database recovers or is
/// reopened); it never crashes the process.
/// </para>
/// </summary>
public abstract class KvCompactionFilter
{
    /// <summary>A name identifying the filter (RocksDB's CompactionFilter::Name), used in messages.</summary>
    public abstract string Name { get; }

    /// <summary>
    /// Decides the fate of one value (RocksDB's FilterV2 for a kValue entry).
    /// </summary>
    /// <param name="level">The level the compaction writes its output to.</param>
    /// <param name="key">The user key.</param>
    /// <param name="existingValue">The value as stored; valid only during the call.</param>
    /// <param name="newValue">
    /// An empty buffer, reused between calls: write the replacement value into it and return
    /// <see cref="KvCompactionFilterDecision.ChangeValue"/>. Ignored for the other decisions.
    /// </param>
    /// <returns>Keep, remove, or replace the value with what was written to <paramref name="newValue"/>.</returns>
    public abstract KvCompactionFilterDecision FilterValue(int level, ReadOnlySpan<byte> key, ReadOnlySpan<byte> existingValue,
        IBufferWriter<byte> newValue);
}
