namespace KvEngine.Extensions.Caching;

/// <summary>
/// One open KvEngine database per full directory path inside the process, shared by every
/// <see cref="KvEngineCache"/> configured with that path (each keeps its own
/// <see cref="KvEngineCacheOptions.InstanceName"/> prefix), so that several logical caches can live
/// in one database although only one <see cref="KvDb"/> can hold its LOCK. Reference-counted: each
/// cache <see cref="Acquire"/>s a reference when created and releases it once when disposed; the
/// database is opened by the first <see cref="Open"/> (with the options of the cache that opens it)
/// and closed when the last reference is released.
/// <para>
/// Thread-safety: every member may be called concurrently. The registry lock guards the table and
/// the reference counts and is never held while a database opens; the close of a path's database
/// runs outside it too, and an <see cref="Acquire"/> of that path meanwhile waits for the close to
/// finish (the directory's LOCK must be free before the path opens again). One open runs at a time
/// per path (the entry's open lock); a caller arriving during it waits for it and gets its result.
/// </para>
/// </summary>
internal sealed class SharedCacheDatabase
{
    private static readonly Dictionary<string, SharedCacheDatabase> s_byPath =
        new(OperatingSystem.IsWindows() || OperatingSystem.IsMacOS() ? StringComparer.OrdinalIgnoreCase : StringComparer.Ordinal);

    private const int StripeCount = 64;

    private readonly object _openLock = new();
    private readonly string _path;
    private int _references; // guarded by s_byPath
    private Task? _closed; // set (under s_byPath) when the last reference is released
    private volatile KvDb? _db;
    private KvBlockCache? _ownedBlockCache; // created for the database; disposed after it is closed
    private bool _released; // guarded by _openLock: the last reference is gone, no open may start

    private SharedCacheDatabase(string path)
    {
        _path = path;
        Stripes = new SemaphoreSlim[StripeCount];
        for (int i = 0; i < Stripes.Length; i++)
        {
            Stripes[i] = new SemaphoreSlim(1, 1);
        }
    }

    /// <summary>
    /// The key locks of every cache on this database (a key's lock is picked by hashing its renewal
    /// key), so that caches sharing an instance name also serialize their writes of one key.
    /// </summary>
    public SemaphoreSlim[] Stripes { get; }

    /// <summary>The full path the database lives at.</summary>
    public string FullPath => _path;

    /// <summary>The options the database was opened with (its stall thresholds, for the health check); null until it is open.</summary>
    public KvOptions? Options { get; private set; }

    /// <summary>The open database; null until <see cref="Open"/> has succeeded.</summary>
    public KvDb? Database => _db;

    /// <summary>The number of caches of the process holding <paramref name="path"/> (tests).</summary>
    internal static int ReferencesTo(string path)
    {
        lock (s_byPath)
        {
            return s_byPath.TryGetValue(Normalize(path), out SharedCacheDatabase? e) && e._closed == null ? e._references : 0;
        }
    }

    /// <summary>Takes a reference to <paramref name="path"/>'s shared database (opening nothing yet).</summary>
    public static SharedCacheDatabase Acquire(string path)
    {
        string full = Normalize(path);
        while (true)
        {
            Task closing;
            lock (s_byPath)
            {
                if (!s_byPath.TryGetValue(full, out SharedCacheDatabase? entry))
                {
                    entry = new SharedCacheDatabase(full);
                    s_byPath.Add(full, entry);
                }
                if (entry._closed == null)
                {
                    entry._references++;
                    return entry;
                }
                closing = entry._closed;
            }
            closing.GetAwaiter().GetResult(); // never faults: see ReleaseCore
        }
    }

    /// <summary>
    /// The database, opened with <paramref name="createOptions"/>'s options when no cache has opened
    /// it yet (the others' options are not used). A failed open is retried by the next call.
    /// </summary>
    /// <exception cref="KvException">The database could not be opened (the lock is held by another process, an I/O error).</exception>
    public KvDb Open(Func<(KvOptions Options, KvBlockCache? OwnedBlockCache)> createOptions)
    {
        KvDb? db = _db;
        if (db != null)
        {
            return db;
        }
        lock (_openLock)
        {
            ObjectDisposedException.ThrowIf(_released, typeof(KvDb)); // the last cache let go while this call waited
            if (_db == null)
            {
                (KvOptions options, KvBlockCache? blockCache) = createOptions();
                KvDb opened;
                try
                {
                    opened = KvDb.Open(_path, options);
                }
                catch
                {
                    blockCache?.Dispose();
                    throw;
                }
                var filter = options.CompactionFilter as ExpiredCacheEntryCompactionFilter;
                _ownedBlockCache = blockCache;
                Options = options;
                filter?.Attach(opened); // it reads renewal records through the database
                _db = opened;
            }
            return _db;
        }
    }

    /// <summary>Releases one reference; the last one closes the database. Never throws.</summary>
    public void Release()
    {
        if (BeginRelease() is { } done)
        {
            try
            {
                TakeForClose()?.Dispose();
            }
            finally
            {
                EndRelease(done);
            }
        }
    }

    /// <summary>Releases one reference; the last one closes the database without blocking. Never throws.</summary>
    public async ValueTask ReleaseAsync()
    {
        if (BeginRelease() is { } done)
        {
            try
            {
                if (TakeForClose() is { } db)
                {
                    await db.DisposeAsync().ConfigureAwait(false);
                }
            }
            finally
            {
                EndRelease(done);
            }
        }
    }

    private TaskCompletionSource? BeginRelease()
    {
        lock (s_byPath)
        {
            if (--_references > 0)
            {
                return null;
            }
            var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            _closed = done.Task;
            return done;
        }
    }

    /// <summary>Refuses further opens and returns the database to close, after any open running now has finished.</summary>
    private KvDb? TakeForClose()
    {
        lock (_openLock)
        {
            _released = true;
            KvDb? db = _db;
            _db = null;
            return db;
        }
    }

    private void EndRelease(TaskCompletionSource done)
    {
        _ownedBlockCache?.Dispose();
        _ownedBlockCache = null;
        lock (s_byPath)
        {
            s_byPath.Remove(_path);
        }
        done.SetResult();
    }

    private static string Normalize(string path) => System.IO.Path.TrimEndingDirectorySeparator(System.IO.Path.GetFullPath(path));
}
