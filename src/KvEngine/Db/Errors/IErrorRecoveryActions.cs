using KvEngine.Db.State;

namespace KvEngine.Db.Errors;

/// <summary>
/// The database's steps a resume drives but does not own (RocksDB's DBImpl::ResumeImpl calls
/// SwitchWAL and FlushMemTable): a memtable switch to a fresh WAL through the write queue, and a
/// flush of one memtable on the calling thread. The composition root implements it over the writer
/// and the flush runner, so the error handling depends on neither.
/// </summary>
internal interface IErrorRecoveryActions
{
    /// <summary>
    /// Switches every family's memtable to a fresh WAL through the write queue (it passes while the
    /// handler is resuming), so no group writes the WAL or inserts meanwhile. Throws what the switch throws.
    /// </summary>
    void SwitchToFreshWal();

    /// <summary>
    /// Writes <paramref name="memTable"/> of <paramref name="family"/> (marked as its running flush
    /// under the mutex) into a table and installs it, on this thread. Throws what the flush throws.
    /// </summary>
    void FlushAndInstall(ColumnFamilyData family, ImmutableMemTable memTable);

    /// <summary>The flush of <paramref name="family"/> started for the resume ended (done or failed); takes the mutex.</summary>
    void EndFlush(ColumnFamilyData family);
}
