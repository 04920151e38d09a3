namespace KvEngine.Db.Checkpoints;

/// <summary>
/// What a checkpoint needs of the database (RocksDB's CheckpointImpl uses only DB's public
/// operations): its directory, file-deletion control, a flush of every family, the live WAL bytes
/// and the live-file capture. The composition root implements it; each member is a call of its own
/// (it enters the database's call gate and throws <see cref="ObjectDisposedException"/> once it closes).
/// </summary>
internal interface ICheckpointSource
{
    /// <summary>The database directory.</summary>
    string Directory { get; }

    /// <summary>Stops obsolete-file deletion (counted; see <see cref="EnableFileDeletions"/>).</summary>
    void DisableFileDeletions();

    /// <summary>Undoes one <see cref="DisableFileDeletions"/> (every one with <paramref name="force"/>); true when deletions are enabled afterwards.</summary>
    bool EnableFileDeletions(bool force);

    /// <summary>The bytes of the WALs on disk at or above MinLogNumberToKeep.</summary>
    long LiveWalBytes();

    /// <summary>Flushes every family's memtables (atomically with AtomicFlush) and waits for the tables.</summary>
    void FlushAll();

    /// <summary>Captures the live files (<see cref="LiveFiles.Capture"/>).</summary>
    LiveFileSet CaptureLiveFiles(bool withWals);
}
