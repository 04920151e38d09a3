namespace KvEngine.Db;

/// <summary>
/// Unleased <see cref="IteratorCursor"/>s of one database, kept for the next
/// <see cref="KvIterator"/>: a fixed array of slots taken and filled with atomic exchanges (no
/// lock). An empty pool makes a new cursor; a full one lets a returned cursor go to the GC.
/// Thread-safe.
/// </summary>
internal sealed class IteratorCursorPool
{
    private readonly IteratorCursor?[] _slots;
    private readonly DbImpl _db;

    public IteratorCursorPool(DbImpl db, int slots)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(slots, 1);
        _db = db;
        _slots = new IteratorCursor?[slots];
    }

    /// <summary>An unleased cursor: a pooled one, or a new one when none is.</summary>
    public IteratorCursor Rent()
    {
        IteratorCursor?[] slots = _slots;
        for (int i = 0; i < slots.Length; i++)
        {
            if (Volatile.Read(ref slots[i]) != null && Interlocked.Exchange(ref slots[i], null) is { } cursor)
            {
                return cursor;
            }
        }
        return new IteratorCursor(_db);
    }

    /// <summary>Keeps an unleased cursor for a later <see cref="Rent"/> if a slot is free.</summary>
    public void Return(IteratorCursor cursor)
    {
        IteratorCursor?[] slots = _slots;
        for (int i = 0; i < slots.Length; i++)
        {
            if (Volatile.Read(ref slots[i]) == null && Interlocked.CompareExchange(ref slots[i], cursor, null) == null)
            {
                return;
            }
        }
    }
}
