using KvEngine.Db.State;

namespace KvEngine.Db;

/// <summary>
/// Counts the calls in flight that touch what <see cref="DbImpl.Close"/> frees outright (the WAL,
/// the mutable memtables, the MANIFEST, the writer queue): writes, flushes, manual compactions,
/// ingestion, properties and size estimates, file listings, resume. Reads (Get, MultiGet,
/// KeyMayExist, iterators) do not pass it: they pin a <see cref="ReadState"/>, which keeps what they
/// touch alive (<see cref="NativeLifetime"/>).
/// <para>
/// Protocol: a call <see cref="TryEnter"/>s (one interlocked increment, then a read of the closing
/// flag) and <see cref="Exit"/>s (one interlocked decrement); <see cref="CloseAndWait"/> sets the
/// flag (a full fence), then waits until the count is zero. Each side writes its variable with an
/// interlocked operation before reading the other's, so either the closer sees the call counted
/// and waits for it, or the call sees the flag and backs out: no call runs past the wait.
/// </para>
/// Thread-safety: every member may be called from any thread; <see cref="CloseAndWait"/> once.
/// </summary>
internal sealed class CallGate
{
    private readonly ManualResetEventSlim _idle = new(false); // never disposed: a late Exit may still set it (it holds no kernel handle unless one is asked for)
    private int _calls;
    private int _closing;

    /// <summary>The gate closed: <see cref="TryEnter"/> fails from now on.</summary>
    public bool IsClosing => Volatile.Read(ref _closing) != 0;

    /// <summary>Counts a call in; false (nothing counted) once the gate is closing.</summary>
    public bool TryEnter()
    {
        Interlocked.Increment(ref _calls);
        if (Volatile.Read(ref _closing) != 0)
        {
            Exit();
            return false;
        }
        return true;
    }

    /// <summary>Counts a call out; the last one out of a closing gate wakes the closer.</summary>
    public void Exit()
    {
        if (Interlocked.Decrement(ref _calls) == 0 && Volatile.Read(ref _closing) != 0)
        {
            _idle.Set();
        }
    }

    /// <summary>
    /// Refuses new calls and waits for the ones in flight. The caller must first have woken every
    /// wait a call can be in (closed the write path, failed pending flushes, cancelled manual
    /// compactions), so each remaining call ends within its current step.
    /// </summary>
    public void CloseAndWait()
    {
        Interlocked.Exchange(ref _closing, 1);
        if (Volatile.Read(ref _calls) != 0)
        {
            _idle.Wait();
        }
    }
}
