using KvEngine.Db.State;
using KvEngine.Format;
using KvEngine.Memtable;
using KvEngine.RangeDel;
using KvEngine.Transactions;

namespace KvEngine.Db.Write;

/// <summary>
/// An optimistic transaction's commit-time check (RocksDB's OptimisticTransactionCallback with
/// TransactionUtil::CheckKeysForConflicts, cache_only): for every tracked key, the newest
/// sequence number the key has in its family's memtables (point entries and covering range
/// tombstones) must not exceed the sequence it was tracked at. The memtables hold every write
/// from the oldest one's <see cref="MemTable.EarliestSequence"/> on; a key tracked before that
/// cannot be checked, and the commit fails with a retryable error, as RocksDB's TryAgain ("the
/// MemTable does not contain a long enough history"). KvEngine keeps no flushed memtables for
/// this (RocksDB's max_write_buffer_size_to_maintain is 0 here), so a flush after the
/// transaction's snapshot makes such a commit retry.
/// <para>Runs in the write path under the database mutex (see <see cref="IWriteValidator"/>); allocation-free.</para>
/// </summary>
internal sealed class ConflictChecker : IWriteValidator
{
    private readonly List<TrackedKey> _keys;

    public ConflictChecker(List<TrackedKey> keys) => _keys = keys;

    public void Validate(ColumnFamilyData?[] families)
    {
        for (int i = 0; i < _keys.Count; i++)
        {
            TrackedKey k = _keys[i];
            ColumnFamilyData? cfd = k.ColumnFamily < (uint)families.Length ? families[k.ColumnFamily] : null;
            if (cfd == null || cfd.IsDropped)
            {
                throw new KvException(
                    $"The transaction wrote or read column family {k.ColumnFamily}, which was dropped.");
            }
            MemTable oldest = cfd.Immutable.Count > 0 ? cfd.Immutable[0].Mem : cfd.Mem;
            if (k.Sequence + 1 < oldest.EarliestSequence)
            {
                throw TransactionErrors.HistoryTooShort(k.Sequence, oldest.EarliestSequence, cfd.Name);
            }
            ulong latest = LatestSequence(cfd.Mem, k.Key);
            for (int j = cfd.Immutable.Count - 1; j >= 0; j--)
            {
                latest = Math.Max(latest, LatestSequence(cfd.Immutable[j].Mem, k.Key));
            }
            if (latest > k.Sequence)
            {
                throw TransactionErrors.Conflict(cfd.Name, k.Sequence, latest);
            }
        }
    }

    /// <summary>The newest sequence number <paramref name="key"/> has in <paramref name="mem"/> (0 when none).</summary>
    private static ulong LatestSequence(MemTable mem, byte[] key)
    {
        ulong latest = 0;
        if (mem.TryGet(key, InternalKeys.MaxSequenceNumber, out _, out _, out ulong sequence))
        {
            latest = sequence;
        }
        if (mem.GetRangeTombstones() is FragmentedRangeTombstoneList tombstones)
        {
            latest = Math.Max(latest, tombstones.MaxCoveringSequence(key, InternalKeys.MaxSequenceNumber));
        }
        return latest;
    }
}
