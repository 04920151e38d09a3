using KvEngine.Db.Checkpoints;
using KvEngine.Diagnostics;

namespace KvEngine.Db;

/// <summary>
/// Checkpoints and backups dispatch: the checks of the database's state (and GetLiveFiles' flush),
/// then <see cref="Checkpoints.Checkpointer"/> and <see cref="Checkpoints.LiveFiles"/>.
/// </summary>
internal sealed partial class DbImpl : ICheckpointSource
{
    /// <summary>Creates a checkpoint of the database in <paramref name="directory"/> (<see cref="Checkpoints.Checkpointer"/>).</summary>
    public void CreateCheckpoint(string directory, ulong logSizeForFlush)
    {
        ArgumentException.ThrowIfNullOrEmpty(directory);
        using CallScope call = EnterCall();
        ThrowIfReadOnly("CreateCheckpoint");
        using System.Diagnostics.Activity? activity = DbActivities.Start(DbActivities.Checkpoint, _dir);
        activity?.SetTag("kvengine.checkpoint.directory", directory);
        try
        {
            new Checkpointer(this, _fs).CreateCheckpoint(directory, logSizeForFlush);
        }
        catch (Exception e)
        {
            DbActivities.Failed(activity, e);
            throw;
        }
    }

    /// <summary>
    /// RocksDB's GetLiveFiles (<see cref="Checkpoints.LiveFiles.GetLiveFiles"/>). With
    /// <paramref name="flushMemtable"/> every family is flushed first (atomically with
    /// AtomicFlush), so the tables hold every write.
    /// </summary>
    public List<string> GetLiveFiles(bool flushMemtable, out ulong manifestFileSize)
    {
        using CallScope call = EnterCall();
        if (flushMemtable)
        {
            ThrowIfReadOnly("GetLiveFiles with a memtable flush");
            FlushCore(null, wait: true);
        }
        return _liveFiles.GetLiveFiles(out manifestFileSize);
    }

    /// <summary>RocksDB's GetSortedWalFiles (<see cref="Checkpoints.LiveFiles.GetSortedWalFiles"/>).</summary>
    public List<(ulong Number, ulong StartSequence, long Size)> GetSortedWalFiles()
    {
        using CallScope call = EnterCall();
        return _liveFiles.GetSortedWalFiles();
    }

    string ICheckpointSource.Directory => _dir;

    void ICheckpointSource.DisableFileDeletions() => DisableFileDeletions();

    bool ICheckpointSource.EnableFileDeletions(bool force) => EnableFileDeletions(force);

    long ICheckpointSource.LiveWalBytes() => _liveFiles.LiveWalBytes();

    void ICheckpointSource.FlushAll() => Flush();

    LiveFileSet ICheckpointSource.CaptureLiveFiles(bool withWals) => _liveFiles.Capture(withWals);
}
