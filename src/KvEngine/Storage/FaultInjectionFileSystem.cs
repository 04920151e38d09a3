namespace KvEngine.Storage;

/// <summary>
/// An in-memory file system for durability tests (after Pebble's vfs.MemFS with crash clones and
/// RocksDB's FaultInjectionTestFS).
/// <para>
/// Model: each file has bytes in the process (appended, not flushed), bytes in the "OS" (flushed)
/// and a synced length; each directory has a live namespace and a durable one, which
/// <see cref="SyncDirectory"/> makes equal to the live one. <see cref="SimulateProcessCrash"/>
/// drops what is only in the process (a SIGKILL); <see cref="SimulatePowerLoss"/> also drops every
/// unsynced byte and reverts each directory to its durable namespace (files created, deleted or
/// renamed since the last directory sync come back or vanish). After either, file objects opened
/// before it throw <see cref="IOException"/>, and all locks are released.
/// </para>
/// <para>
/// <see cref="ShouldFail"/> injects <see cref="IOException"/>s. Thread-safe: one lock guards all
/// state; it is a test device, not a fast one.
/// </para>
/// </summary>
internal sealed class FaultInjectionFileSystem : IFileSystem
{
    private readonly object _gate = new();
    private readonly Dictionary<string, MemFile> _live = new(StringComparer.Ordinal);
    private readonly Dictionary<string, MemFile> _durable = new(StringComparer.Ordinal);
    private readonly HashSet<string> _directories = new(StringComparer.Ordinal);
    private readonly HashSet<string> _locks = new(StringComparer.Ordinal);
    private int _generation;

    /// <summary>When set and it returns true for an operation and path, that operation throws.</summary>
    public Func<FileOperation, string, bool>? ShouldFail { get; set; }

    /// <summary>
    /// HResult of the injected <see cref="IOException"/>s; 0 keeps IOException's own (a generic
    /// I/O error). <see cref="StorageErrors.ENoSpc"/> makes them "no space left on device".
    /// </summary>
    public int InjectedHResult { get; set; }

    /// <summary>Counts of operations performed, for tests that assert on I/O behaviour.</summary>
    public int SyncCount { get; private set; }

    public int DirectorySyncCount { get; private set; }

    internal object Gate => _gate;

    internal int Generation => _generation;

    public IWritableFile CreateWritable(string path)
    {
        lock (_gate)
        {
            Check(FileOperation.Create, path);
            RequireParent(path);
            var f = new MemFile();
            _live[path] = f;
            return new MemWritableFile(this, f, path, _generation);
        }
    }

    public IRandomAccessFile OpenRandomAccess(string path)
    {
        lock (_gate)
        {
            Check(FileOperation.OpenRead, path);
            return new MemRandomAccessFile(this, Get(path), path, _generation);
        }
    }

    public ISequentialFile OpenSequential(string path)
    {
        lock (_gate)
        {
            Check(FileOperation.OpenRead, path);
            return new MemSequentialFile(this, Get(path), path, _generation);
        }
    }

    public bool FileExists(string path)
    {
        lock (_gate)
        {
            return _live.ContainsKey(path);
        }
    }

    public long GetFileSize(string path)
    {
        lock (_gate)
        {
            return Get(path).OsLength;
        }
    }

    public void DeleteFile(string path)
    {
        lock (_gate)
        {
            Check(FileOperation.Delete, path);
            if (!_live.Remove(path))
            {
                throw new FileNotFoundException($"No such file: {path}", path);
            }
        }
    }

    public void RenameFile(string from, string to)
    {
        lock (_gate)
        {
            Check(FileOperation.Rename, from);
            MemFile f = Get(from);
            RequireParent(to);
            _live.Remove(from);
            _live[to] = f;
        }
    }

    public void LinkFile(string from, string to)
    {
        lock (_gate)
        {
            Check(FileOperation.Link, to);
            MemFile f = Get(from);
            RequireParent(to);
            if (_live.ContainsKey(to))
            {
                throw new IOException($"Cannot link '{from}' to '{to}': the target exists.");
            }
            _live[to] = f; // one MemFile under two names, as an inode with two directory entries
        }
    }

    public void WriteAt(string path, long offset, ReadOnlySpan<byte> data)
    {
        lock (_gate)
        {
            Check(FileOperation.WriteAt, path);
            MemFile f = Get(path);
            if (offset < 0 || offset + data.Length > f.Length)
            {
                throw new IOException($"Cannot overwrite {data.Length} bytes at {offset} in '{path}': past the end of the file.");
            }
            f.Overwrite((int)offset, data);
            f.Sync();
            SyncCount++;
        }
    }

    public void TruncateFile(string path, long length)
    {
        lock (_gate)
        {
            Check(FileOperation.Truncate, path);
            MemFile f = Get(path);
            if (length < 0 || length > f.Length)
            {
                throw new IOException($"Cannot truncate '{path}' to {length} bytes: past the end of the file.");
            }
            f.Truncate((int)length);
            SyncCount++;
        }
    }

    public void CreateDirectory(string path)
    {
        lock (_gate)
        {
            Check(FileOperation.CreateDirectory, path);
            _directories.Add(Normalize(path));
        }
    }

    public bool DirectoryExists(string path)
    {
        lock (_gate)
        {
            return _directories.Contains(Normalize(path));
        }
    }

    /// <summary>Directory creation, deletion and rename are durable at once (this model keeps no directory of directories).</summary>
    public void DeleteDirectory(string path)
    {
        lock (_gate)
        {
            Check(FileOperation.DeleteDirectory, path);
            string dir = Normalize(path);
            if (!_directories.Contains(dir))
            {
                throw new DirectoryNotFoundException($"No such directory: {path}");
            }
            if (HasEntries(dir))
            {
                throw new IOException($"Directory '{path}' is not empty.");
            }
            _directories.Remove(dir);
            RemoveDurableUnder(dir);
        }
    }

    public void RenameDirectory(string from, string to)
    {
        lock (_gate)
        {
            Check(FileOperation.RenameDirectory, from);
            string source = Normalize(from);
            string target = Normalize(to);
            if (!_directories.Contains(source))
            {
                throw new DirectoryNotFoundException($"No such directory: {from}");
            }
            if (_directories.Contains(target) || _live.ContainsKey(target))
            {
                throw new IOException($"Cannot rename '{from}' to '{to}': the target exists.");
            }
            RequireParent(target);
            foreach (string d in new List<string>(_directories))
            {
                if (d == source || d.StartsWith(source + "/", StringComparison.Ordinal))
                {
                    _directories.Remove(d);
                    _directories.Add(target + d[source.Length..]);
                }
            }
            MoveEntries(_live, source, target);
            MoveEntries(_durable, source, target);
        }
    }

    private bool HasEntries(string dir)
    {
        foreach (string p in _live.Keys)
        {
            if (p.StartsWith(dir + "/", StringComparison.Ordinal))
            {
                return true;
            }
        }
        foreach (string d in _directories)
        {
            if (d.StartsWith(dir + "/", StringComparison.Ordinal))
            {
                return true;
            }
        }
        return false;
    }

    private void RemoveDurableUnder(string dir)
    {
        foreach (string p in new List<string>(_durable.Keys))
        {
            if (p.StartsWith(dir + "/", StringComparison.Ordinal))
            {
                _durable.Remove(p);
            }
        }
    }

    private static void MoveEntries(Dictionary<string, MemFile> files, string source, string target)
    {
        foreach (string p in new List<string>(files.Keys))
        {
            if (p.StartsWith(source + "/", StringComparison.Ordinal))
            {
                MemFile f = files[p];
                files.Remove(p);
                files[target + p[source.Length..]] = f;
            }
        }
    }

    public IReadOnlyList<string> GetChildren(string directory)
    {
        lock (_gate)
        {
            Check(FileOperation.List, directory);
            string dir = Normalize(directory);
            if (!_directories.Contains(dir))
            {
                throw new DirectoryNotFoundException($"No such directory: {directory}");
            }
            var names = new List<string>();
            foreach (string p in _live.Keys)
            {
                if (ParentOf(p) == dir)
                {
                    names.Add(Path.GetFileName(p));
                }
            }
            names.Sort(StringComparer.Ordinal);
            return names;
        }
    }

    public void SyncDirectory(string directory)
    {
        lock (_gate)
        {
            Check(FileOperation.SyncDirectory, directory);
            string dir = Normalize(directory);
            DirectorySyncCount++;
            var stale = new List<string>();
            foreach (string p in _durable.Keys)
            {
                if (ParentOf(p) == dir)
                {
                    stale.Add(p);
                }
            }
            foreach (string p in stale)
            {
                _durable.Remove(p);
            }
            foreach (KeyValuePair<string, MemFile> e in _live)
            {
                if (ParentOf(e.Key) == dir)
                {
                    _durable[e.Key] = e.Value;
                }
            }
        }
    }

    public IDisposable LockFile(string path)
    {
        lock (_gate)
        {
            Check(FileOperation.Lock, path);
            if (!_locks.Add(path))
            {
                throw new KvLockHeldException($"Lock file '{path}' is held by another instance.");
            }
            if (!_live.ContainsKey(path))
            {
                RequireParent(path);
                _live[path] = new MemFile();
            }
            return new MemLock(this, path, _generation);
        }
    }

    /// <summary>A SIGKILL: bytes appended but not flushed are lost; everything in the "OS" stays.</summary>
    public void SimulateProcessCrash()
    {
        lock (_gate)
        {
            foreach (MemFile f in _live.Values)
            {
                f.DropProcessBuffer();
            }
            EndGeneration();
        }
    }

    /// <summary>Power loss: only synced bytes of files in durable directory entries survive.</summary>
    public void SimulatePowerLoss()
    {
        lock (_gate)
        {
            _live.Clear();
            foreach (KeyValuePair<string, MemFile> e in _durable)
            {
                e.Value.DropUnsynced();
                _live[e.Key] = e.Value;
            }
            EndGeneration();
        }
    }

    /// <summary>Test helper: the bytes of a file as the OS sees them.</summary>
    public byte[] ReadAllBytes(string path)
    {
        lock (_gate)
        {
            return Get(path).OsSnapshot();
        }
    }

    /// <summary>Test helper: replaces a file's content (e.g. to corrupt it); counts as synced.</summary>
    public void WriteAllBytes(string path, ReadOnlySpan<byte> content)
    {
        lock (_gate)
        {
            RequireParent(path);
            if (!_live.TryGetValue(path, out MemFile? f))
            {
                f = new MemFile();
                _live[path] = f;
            }
            f.Replace(content);
            _durable[path] = f;
        }
    }

    internal void Check(FileOperation op, string path)
    {
        Func<FileOperation, string, bool>? hook = ShouldFail;
        if (hook != null && hook(op, path))
        {
            int hresult = InjectedHResult;
            throw hresult == 0
                ? new IOException($"Injected I/O error: {op} {path}")
                : new IOException($"Injected I/O error {hresult}: {op} {path}", hresult);
        }
    }

    internal void CheckAlive(int generation, string path)
    {
        if (generation != _generation)
        {
            throw new IOException($"File handle for '{path}' did not survive a simulated crash.");
        }
    }

    internal void CountSync() => SyncCount++;

    internal void ReleaseLock(string path, int generation)
    {
        lock (_gate)
        {
            if (generation == _generation)
            {
                _locks.Remove(path);
            }
        }
    }

    private void EndGeneration()
    {
        _generation++;
        _locks.Clear();
    }

    private MemFile Get(string path) =>
        _live.TryGetValue(path, out MemFile? f) ? f : throw new FileNotFoundException($"No such file: {path}", path);

    private void RequireParent(string path)
    {
        string parent = ParentOf(path);
        if (!_directories.Contains(parent))
        {
            throw new DirectoryNotFoundException($"No such directory: {parent}");
        }
    }

    private static string ParentOf(string path) => Normalize(Path.GetDirectoryName(path) ?? string.Empty);

    private static string Normalize(string dir) => dir.TrimEnd('/', '\\');
}
