using KvEngine.Db.State;
using KvEngine.Versions;

namespace KvEngine.Db.Background;

/// <summary>
/// The file numbers of tables being written by a flush, compaction or ingestion (RocksDB's
/// pending_outputs_): a file-deletion sweep never deletes them.
/// <para>
/// Invariant: a number joins the set when it is allocated (and the MANIFEST records a next file
/// number above it before the caller gets it) and leaves it only after the version
/// that names the table is installed (or the job failed and removed its file), so a sweep that
/// copies the set before reading the live versions never misses a table in the making.
/// Thread-safety: every member takes the database mutex (re-entrant: callers may hold it).
/// </para>
/// </summary>
internal sealed class PendingOutputs
{
    private readonly DbMutex _mutex;
    private readonly VersionSet _versions;
    private readonly HashSet<ulong> _numbers = new();

    /// <param name="mutex">The database mutex, which guards the set.</param>
    /// <param name="versions">Allocates the file numbers.</param>
    public PendingOutputs(DbMutex mutex, VersionSet versions)
    {
        _mutex = mutex;
        _versions = versions;
    }

    /// <summary>
    /// A new file number, registered as a pending output until its owner removes it, and covered
    /// by the MANIFEST's next file number before it is returned (<see cref="VersionSet.RecordFileNumber"/>:
    /// the table may be created once this returns). Throws what that MANIFEST write throws.
    /// </summary>
    public ulong NewFileNumber()
    {
        ulong n;
        using (_mutex.Lock())
        {
            n = _versions.NewFileNumber();
            _numbers.Add(n);
        }
        try
        {
            _versions.RecordFileNumber(n);
        }
        catch
        {
            Remove(n);
            throw;
        }
        return n;
    }

    /// <summary>The table numbered <paramref name="number"/> is installed or gone: it is no longer protected.</summary>
    public void Remove(ulong number)
    {
        using (_mutex.Lock())
        {
            _numbers.Remove(number);
        }
    }

    /// <summary>Removes every number of <paramref name="numbers"/>.</summary>
    public void RemoveAll(List<ulong> numbers)
    {
        using (_mutex.Lock())
        {
            foreach (ulong n in numbers)
            {
                _numbers.Remove(n);
            }
        }
    }

    /// <summary>A copy of the set. Holds the mutex (a sweep reads it with the next file number).</summary>
    public HashSet<ulong> Copy()
    {
        _mutex.AssertHeld();
        return new(_numbers);
    }
}
