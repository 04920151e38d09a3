using KvEngine.Db.Read;
using KvEngine.Iterators;

namespace KvEngine.Db;

/// <summary>
/// What a <see cref="KvIterator"/> reads through: the iterator tree it owns now
/// (<see cref="Pinned"/>, replaced by a refresh) and a <see cref="Token"/> that names the lease.
/// Pooled by <see cref="IteratorCursorPool"/>, so a new iterator allocates nothing in steady state.
/// <para>
/// Invariants: <see cref="Pinned"/> is null exactly while the cursor is not leased (in the pool or
/// dropped); every end of a lease advances <see cref="Token"/> (<see cref="TryEnd"/>, one
/// compare-and-swap), so a <see cref="KvIterator"/> copy from an earlier lease never matches again:
/// its calls throw <see cref="ObjectDisposedException"/> and its second Dispose does nothing, even
/// after the cursor serves another iterator (the token pattern of ValueTask's sources).
/// </para>
/// Thread-safety: one thread uses a lease at a time (as a <see cref="KvIterator"/>); ending a lease
/// is atomic, so two racing Disposes end it once.
/// </summary>
internal sealed class IteratorCursor
{
    private int _token;

    public IteratorCursor(DbImpl db)
    {
        Db = db;
    }

    public DbImpl Db { get; }

    /// <summary>The tree this lease reads; null while not leased.</summary>
    public PinnedIterator? Pinned { get; private set; }

    /// <summary>The lease's iterator (<see cref="Pinned"/>'s), cached for the hot calls.</summary>
    public DbIterator Inner { get; private set; } = null!;

    /// <summary>Names the current lease; advanced when it ends.</summary>
    public int Token => Volatile.Read(ref _token);

    /// <summary>Starts a lease over <paramref name="pinned"/>; returns its token.</summary>
    public int Lease(PinnedIterator pinned)
    {
        Pinned = pinned;
        Inner = pinned.Iterator;
        return _token;
    }

    /// <summary>The lease now reads <paramref name="renewed"/> (a refresh).</summary>
    public void Replace(PinnedIterator renewed)
    {
        Pinned = renewed;
        Inner = renewed.Iterator;
    }

    /// <summary>
    /// Ends lease <paramref name="token"/> if it is the current one: returns its tree (the caller
    /// gives it back to the database) and leaves the cursor unleased; null when that lease had ended.
    /// </summary>
    public PinnedIterator? TryEnd(int token)
    {
        if (Interlocked.CompareExchange(ref _token, unchecked(token + 1), token) != token)
        {
            return null;
        }
        PinnedIterator? pinned = Pinned;
        Pinned = null;
        Inner = null!;
        return pinned;
    }
}
