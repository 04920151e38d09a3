using System.Globalization;
using KvEngine.OptionsFile;
using KvEngine.Storage;
using KvEngine.Versions;

namespace KvEngine.Db;

/// <summary>
/// RocksDB's DestroyDB: deletes every file of a database and then its directory.
/// <para>
/// Takes the database's LOCK first, so a database open in this or another process is refused
/// (<see cref="KvException"/>) and nothing is deleted. Then deletes each file whose name is one of
/// RocksDB's database file names (<see cref="IsDatabaseFile"/>: tables, WALs, MANIFESTs, CURRENT,
/// IDENTITY, OPTIONS files, info LOGs, temporary files), releases the lock, deletes LOCK and
/// removes the directory when nothing else is left in it. Files of other names (and
/// subdirectories, such as Repair's <c>lost</c>) are left alone, as RocksDB leaves them. Not
/// atomic: a crash part way leaves a database without some of its files, which is why it refuses
/// to run on an open one. Stateless; thread-safe as the file system is.
/// </para>
/// </summary>
internal static class DbDestroyer
{
    /// <summary>Destroys the database at <paramref name="path"/>; nothing happens when the directory does not exist.</summary>
    public static void Destroy(string path, IFileSystem fs)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        string dir = Path.GetFullPath(path);
        if (!fs.DirectoryExists(dir))
        {
            return;
        }
        IReadOnlyList<string> names;
        IDisposable dbLock;
        try
        {
            names = fs.GetChildren(dir);
            dbLock = fs.LockFile(FileNames.LockFile(dir));
        }
        catch (KvLockHeldException e)
        {
            throw new KvLockHeldException($"Database '{dir}' is open (its LOCK is held); close it before destroying it.", e);
        }
        catch (IOException e)
        {
            throw new KvException($"Destroying '{dir}' failed: {e.Message}", e);
        }
        IOException? firstError = null;
        try
        {
            foreach (string name in names)
            {
                if (name == FileNames.Lock || !IsDatabaseFile(name))
                {
                    continue;
                }
                try
                {
                    fs.DeleteFile(Path.Combine(dir, name));
                }
                catch (IOException e)
                {
                    firstError ??= e; // go on, as RocksDB does, and report the first failure
                }
            }
        }
        finally
        {
            dbLock.Dispose();
        }
        if (firstError != null)
        {
            throw new KvException($"Destroying '{dir}' failed: {firstError.Message}", firstError);
        }
        try
        {
            fs.DeleteFile(FileNames.LockFile(dir));
            fs.DeleteDirectory(dir);
        }
        catch (IOException)
        {
            // Other files remain in the directory (or LOCK went already): leave it, as RocksDB does.
        }
    }

    /// <summary>
    /// RocksDB's ParseFileName: CURRENT, LOCK, IDENTITY, LOG, LOG.old.N, MANIFEST-N, OPTIONS-N(.dbtmp),
    /// N.log, N.sst, N.ldb, N.blob, N.dbtmp.
    /// </summary>
    internal static bool IsDatabaseFile(string name)
    {
        if (FileNames.TryParse(name, out _, out _) || OptionsFileNames.TryParse(name, out _, out _) || name == "LOG")
        {
            return true;
        }
        if (name.StartsWith("LOG.old.", StringComparison.Ordinal))
        {
            return ulong.TryParse(name.AsSpan(8), NumberStyles.None, CultureInfo.InvariantCulture, out _);
        }
        int dot = name.IndexOf('.', StringComparison.Ordinal);
        return dot > 0
            && ulong.TryParse(name.AsSpan(0, dot), NumberStyles.None, CultureInfo.InvariantCulture, out _)
            && name.AsSpan(dot) is ".ldb" or ".blob";
    }
}
