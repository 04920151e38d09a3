namespace KvEngine.Storage;

/// <summary>
/// A held LOCK file of <see cref="LocalFileSystem.LockFile"/>: the open file that carries its flock
/// and (Linux) its POSIX record lock, and the path's entry in a process-wide set of held locks.
/// <para>
/// Why the set: a POSIX record lock belongs to the process and is released when any descriptor of
/// the file in the process is closed, so a second open of the same LOCK in this process must not
/// even open the file (its failure would close a descriptor and drop the first holder's lock,
/// letting a RocksDB process in). The set refuses it first, as RocksDB's own
/// <c>lockedFiles</c> does.
/// </para>
/// <para>Thread-safety: the set is guarded by its own lock; Dispose is idempotent.</para>
/// </summary>
internal sealed class LocalFileLock : IDisposable
{
    private static readonly HashSet<string> s_held = new(StringComparer.Ordinal);

    private readonly string _path;
    private FileStream? _stream;

    private LocalFileLock(string path, FileStream stream)
    {
        _path = path;
        _stream = stream;
    }

    /// <summary>Locks <paramref name="path"/> (full path) with <paramref name="open"/>, which opens and locks the file.</summary>
    /// <exception cref="KvLockHeldException">This process already holds it.</exception>
    public static LocalFileLock Acquire(string path, Func<string, FileStream> open)
    {
        string full = Path.GetFullPath(path);
        lock (s_held)
        {
            if (!s_held.Add(full))
            {
                throw new KvLockHeldException($"Lock file '{path}' is held by another instance in this process.");
            }
        }
        try
        {
            return new LocalFileLock(full, open(path));
        }
        catch
        {
            lock (s_held)
            {
                s_held.Remove(full);
            }
            throw;
        }
    }

    public void Dispose()
    {
        FileStream? stream = Interlocked.Exchange(ref _stream, null);
        if (stream == null)
        {
            return;
        }
        stream.Dispose();
        lock (s_held)
        {
            s_held.Remove(_path);
        }
    }
}
