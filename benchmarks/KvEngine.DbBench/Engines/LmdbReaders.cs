using LightningDB;

namespace KvEngine.DbBench.Engines;

/// <summary>
/// The read transactions of one open LMDB environment (<see cref="LmdbBench"/>): each benchmark
/// thread keeps one <see cref="LmdbReader"/> in a thread-static slot and reuses it for every read
/// (no transaction created per Get); a thread that needs a second at once (an iterator open while
/// it reads) gets a new one. Every reader made is recorded so <see cref="Dispose"/>, on the main
/// thread after the benchmark threads finished, releases them before the environment closes.
/// Take and Give are thread-safe (the slot is the calling thread's; the record is locked only
/// when a reader is made).
/// </summary>
internal sealed class LmdbReaders : IDisposable
{
    [ThreadStatic]
    private static LmdbReader? t_reader;

    private readonly LightningEnvironment _env;
    private readonly LightningDatabase _db;
    private readonly List<LmdbReader> _all = [];
    private readonly Lock _gate = new();

    public LmdbReaders(LightningEnvironment env, LightningDatabase db)
    {
        _env = env;
        _db = db;
    }

    /// <summary>This thread's reader, marked in use; a new one when it is in use or belongs to an earlier environment.</summary>
    public LmdbReader Take()
    {
        LmdbReader? r = t_reader;
        if (r == null || r.InUse || !ReferenceEquals(r.Environment, _env))
        {
            r = new LmdbReader(_env, _db);
            lock (_gate)
            {
                _all.Add(r);
            }
            if (t_reader == null || !ReferenceEquals(t_reader.Environment, _env))
            {
                t_reader = r;
            }
        }
        r.InUse = true;
        return r;
    }

    /// <summary>Ends the reader's snapshot and frees it for the thread's next read.</summary>
    public static void Give(LmdbReader reader)
    {
        reader.End();
        reader.InUse = false;
    }

    public void Dispose()
    {
        lock (_gate)
        {
            foreach (LmdbReader r in _all)
            {
                r.Dispose();
            }
            _all.Clear();
        }
    }
}
