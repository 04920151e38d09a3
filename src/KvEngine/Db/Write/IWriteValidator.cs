using KvEngine.Db.State;

namespace KvEngine.Db.Write;

/// <summary>
/// A check a write must pass before it takes sequence numbers (RocksDB's WriteCallback): run by
/// the write path under the database mutex, by the leader of a group holding only that write,
/// once every earlier write is in the memtables. It must be quick and must not block or write.
/// </summary>
internal interface IWriteValidator
{
    /// <summary>Throws a <see cref="KvException"/> to refuse the write.</summary>
    /// <param name="families">The column families by id (null where dropped).</param>
    void Validate(ColumnFamilyData?[] families);
}
