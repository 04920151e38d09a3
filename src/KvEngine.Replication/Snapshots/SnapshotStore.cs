namespace KvEngine.Replication.Snapshots;

/// <summary>
/// The checkpoints of one replicated database, in its <c>snapshots</c> directory: each a complete
/// checkpoint named <see cref="CheckpointSnapshot.DirectoryName"/>; a name ending <c>.tmp</c> is a
/// checkpoint or an extraction that did not finish and is deleted when found.
/// Thread-safety: <see cref="Current"/> is read and replaced atomically (volatile); creation and
/// installation run on the applier (one at a time), deletion in <see cref="DeleteOlderThan"/> may
/// run beside them (DotNext's log calls it from its flusher; callers may too), is serialized by
/// its own lock and never touches the current snapshot or anything newer.
/// </summary>
internal sealed class SnapshotStore
{
    private const string TempSuffix = ".tmp";
    private readonly Lock _deleteLock = new();
    private volatile CheckpointSnapshot? _current;

    public SnapshotStore(string directory)
    {
        Directory = directory;
        System.IO.Directory.CreateDirectory(directory);
        foreach (string path in System.IO.Directory.EnumerateDirectories(directory))
        {
            string name = Path.GetFileName(path);
            if (name.EndsWith(TempSuffix, StringComparison.Ordinal))
            {
                System.IO.Directory.Delete(path, recursive: true);
            }
            else if (CheckpointSnapshot.TryParseDirectoryName(name, out long index, out long term)
                && (_current is null || index > _current.Index))
            {
                _current = CheckpointSnapshot.Load(path, index, term);
            }
        }
        foreach (string path in System.IO.Directory.EnumerateFiles(directory, "*" + TempSuffix))
        {
            File.Delete(path);
        }
    }

    /// <summary>The snapshots' directory.</summary>
    public string Directory { get; }

    /// <summary>The newest complete snapshot; null before the first.</summary>
    public CheckpointSnapshot? Current => _current;

    /// <summary>Where the snapshot of <paramref name="index"/> and <paramref name="term"/> goes.</summary>
    public string PathOf(long index, long term) => Path.Combine(Directory, CheckpointSnapshot.DirectoryName(index, term));

    /// <summary>A scratch path for a file or directory that becomes a snapshot or is thrown away.</summary>
    public string TempPath(string name) => Path.Combine(Directory, name + TempSuffix);

    /// <summary>Makes the complete checkpoint in <paramref name="path"/> the current snapshot.</summary>
    public CheckpointSnapshot Publish(string path, long index, long term)
    {
        CheckpointSnapshot snapshot = CheckpointSnapshot.Load(path, index, term);
        _current = snapshot;
        return snapshot;
    }

    /// <summary>
    /// Deletes the snapshots whose index is below <paramref name="watermark"/> (never the current
    /// one): DotNext guarantees no reader will ask for them again.
    /// </summary>
    /// <returns>How many were deleted.</returns>
    public int DeleteOlderThan(long watermark, CancellationToken cancellationToken)
    {
        lock (_deleteLock)
        {
            CheckpointSnapshot? current = _current;
            int deleted = 0;
            foreach (string path in System.IO.Directory.GetDirectories(Directory))
            {
                cancellationToken.ThrowIfCancellationRequested();
                if (CheckpointSnapshot.TryParseDirectoryName(Path.GetFileName(path), out long index, out _)
                    && index < watermark && (current is null || index < current.Index))
                {
                    // Renamed out of the snapshot namespace first: a crash midway leaves a .tmp
                    // directory (deleted at the next open), never a half-deleted snapshot.
                    string doomed = path + TempSuffix;
                    System.IO.Directory.Move(path, doomed);
                    System.IO.Directory.Delete(doomed, recursive: true);
                    deleted++;
                }
            }
            return deleted;
        }
    }
}
