namespace KvEngine.Db.Write;

/// <summary>
/// What the <see cref="WriteThread"/> asks of the database while a writer waits for its turn: a
/// writer that reaches the queue's head prepares its group (making room, then
/// <see cref="WriteThread.BeginGroup"/> and <see cref="WriteThread.AddFollowers"/>), and a
/// writer a leader handed its insert to inserts its own batch. Implemented by <see cref="DbWriter"/>.
/// </summary>
internal interface IWriteGroupWorker
{
    /// <summary>Holds the database mutex; <paramref name="leader"/> is the queue's head.</summary>
    WriteGroup PrepareGroup(WriteRequest leader);

    /// <summary>Outside the mutex: inserts <paramref name="request"/>'s batch at the sequence its leader gave it.</summary>
    void InsertAssigned(WriteRequest request);
}
