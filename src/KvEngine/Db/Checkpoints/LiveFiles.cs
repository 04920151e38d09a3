using KvEngine.Db.Logs;
using KvEngine.Db.State;
using KvEngine.Storage;
using KvEngine.Versions;

namespace KvEngine.Db.Checkpoints;

/// <summary>
/// The live files of the database (RocksDB's GetLiveFiles, GetSortedWalFiles and
/// GetLiveFilesStorageInfo) for checkpoints and external backups. A capture takes the tables,
/// MANIFEST size and MinLogNumberToKeep under the version set's lock (one consistent state), then
/// the OPTIONS file (under the family gate, so no OPTIONS write is half done) and last the WALs
/// (the current WAL's number and size at a record boundary read together under the mutex,
/// <see cref="WalSet.FlushedSize"/>). The files stay on disk only while file deletions are disabled.
/// <para>
/// Thread-safety: any thread. Takes the family gate, then the mutex (the database's lock order),
/// never both at once here; the version set takes its own lock.
/// </para>
/// </summary>
internal sealed class LiveFiles
{
    private readonly DbMutex _mutex;
    private readonly object _familyGate;
    private readonly string _dir;
    private readonly IFileSystem _fs;
    private readonly VersionSet _versions;
    private readonly WalSet _wals;
    private readonly WalDirectory _walDirectory;
    private readonly Action _throwIfClosed;

    /// <summary><paramref name="throwIfClosed"/> throws <see cref="ObjectDisposedException"/> once the database closed (called under the family gate, which Close takes).</summary>
    public LiveFiles(DbMutex mutex, object familyGate, string dir, IFileSystem fs, VersionSet versions, WalSet wals, Action throwIfClosed)
    {
        _mutex = mutex;
        _familyGate = familyGate;
        _dir = dir;
        _fs = fs;
        _versions = versions;
        _wals = wals;
        _walDirectory = new WalDirectory(dir, fs);
        _throwIfClosed = throwIfClosed;
    }

    /// <summary>
    /// RocksDB's GetLiveFiles without the flush: names relative to the database directory with a
    /// leading '/' ("/000012.sst", "/CURRENT", "/MANIFEST-000005", "/OPTIONS-000007") and the
    /// MANIFEST size to copy. Unflushed writes are only in the WALs (<see cref="GetSortedWalFiles"/>).
    /// </summary>
    public List<string> GetLiveFiles(out ulong manifestFileSize)
    {
        LiveFileSet set = Capture(withWals: false);
        var names = new List<string>(set.Tables.Count + 3);
        foreach ((ulong number, ulong _) in set.Tables)
        {
            names.Add("/" + Path.GetFileName(FileNames.TableFile(_dir, number)));
        }
        names.Add("/" + FileNames.Current);
        names.Add("/" + FileNames.ManifestName(set.ManifestNumber));
        if (set.OptionsNumber != 0)
        {
            names.Add("/" + OptionsFile.OptionsFileNames.FileName(set.OptionsNumber));
        }
        manifestFileSize = set.ManifestSize;
        return names;
    }

    /// <summary>
    /// RocksDB's GetSortedWalFiles: every WAL file in the directory, ascending, with the sequence
    /// number of each one's first batch (0 for an empty WAL) and its size now (the one being
    /// written: up to its last record). Not only those at or above MinLogNumberToKeep: a flush
    /// between GetLiveFiles and this call moves that bound, and a backup whose MANIFEST still
    /// tracks the older WAL needs it (while deletions are disabled it stays on disk). A WAL that an
    /// obsolete-file sweep deletes meanwhile is left out.
    /// </summary>
    public List<(ulong Number, ulong StartSequence, long Size)> GetSortedWalFiles()
    {
        (ulong current, long currentSize) = CurrentWal();
        return _walDirectory.SortedWalFiles(current, currentSize);
    }

    /// <summary>
    /// Captures the live files (see <see cref="LiveFileSet"/>); with <paramref name="withWals"/>
    /// also the WALs at or above the captured MinLogNumberToKeep, the current one with its size at
    /// the last record boundary. The caller keeps file deletions disabled while it uses them.
    /// </summary>
    public LiveFileSet Capture(bool withWals)
    {
        LiveFileSet set;
        lock (_familyGate)
        {
            _throwIfClosed();
            List<(ulong Number, ulong Size)> tables = _versions.CaptureLiveFiles(out ulong manifest, out ulong manifestSize, out ulong minLog);
            set = new LiveFileSet(tables, manifest, manifestSize, minLog);
            set.OptionsNumber = OptionsFile.OptionsFileStore.Newest(_fs, _dir);
        }
        if (!withWals)
        {
            return set;
        }
        (ulong current, long currentSize) = CurrentWal();
        set.Wals.AddRange(_walDirectory.LiveWals(set.MinLogNumberToKeep, current, currentSize));
        return set;
    }

    /// <summary>The bytes of the WALs on disk at or above MinLogNumberToKeep (the checkpoint's flush rule).</summary>
    public long LiveWalBytes() => _walDirectory.BytesFrom(_versions.MinLogNumberToKeep);

    /// <summary>The WAL being written and its size at the last record boundary, read together under the mutex.</summary>
    private (ulong Number, long Size) CurrentWal()
    {
        using (_mutex.Lock())
        {
            return (_wals.CurrentNumber, _wals.FlushedSize);
        }
    }
}
