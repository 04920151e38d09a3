namespace KvEngine.Db.Background;

/// <summary>What a <see cref="BackgroundScheduler"/> thread asks of the database. Implemented by <see cref="BackgroundJobPicker"/>.</summary>
internal interface IBackgroundWorker
{
    /// <summary>
    /// Picks one flush or compaction and runs it on the calling thread; false when there is none
    /// (the thread then sleeps until <see cref="BackgroundScheduler.Wake"/>), or when the database
    /// is closing (the scheduler then stops the thread).
    /// </summary>
    bool TryRunJob();

    /// <summary>
    /// Housekeeping of a thread that found no job for <see cref="BackgroundScheduler.IdleCheckInterval"/>:
    /// frees the spare memtable blocks of families that stopped writing.
    /// </summary>
    void OnIdle();
}
