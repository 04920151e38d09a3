namespace KvEngine.Db.State;

/// <summary>
/// Defers the release of what pinned read states reach (the table readers and the block cache the
/// database owns) until the last of them is gone: a reference count that starts at one (the open
/// database's reference, dropped by <see cref="DbImpl.Close"/>) and that every
/// <see cref="ReadState"/> holds once from its creation to its last release. Reads and iterators
/// therefore never see those freed, and pay nothing for it: they already pin the read state, and a
/// read state is created only when one is published (memtable switch, flush, compaction).
/// <para>
/// The release runs once, on the thread that drops the last reference: Close, or the read or
/// iterator Dispose that releases the last read state after it. An iterator never disposed keeps
/// them alive.
/// </para>
/// Thread-safety: any thread; the count is interlocked.
/// </summary>
internal sealed class NativeLifetime
{
    private readonly Action _release;
    private int _refs = 1;

    public NativeLifetime(Action release)
    {
        _release = release;
    }

    /// <summary>The release ran (every reference was dropped).</summary>
    public bool IsReleased => Volatile.Read(ref _refs) == 0;

    /// <summary>Takes a reference; only while one is held (a read state is published only by an open database or a job it waits for).</summary>
    public void Ref()
    {
        if (Interlocked.Increment(ref _refs) <= 1)
        {
            throw new InvalidOperationException("A read state was created after the database released its native state.");
        }
    }

    /// <summary>Drops a reference; the last one runs the release.</summary>
    public void Unref()
    {
        int r = Interlocked.Decrement(ref _refs);
        if (r == 0)
        {
            _release();
        }
        else if (r < 0)
        {
            throw new InvalidOperationException("NativeLifetime released more often than referenced.");
        }
    }
}
