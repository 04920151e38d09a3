using LightningDB;

namespace KvEngine.DbBench.Engines;

/// <summary>
/// One benchmark thread's reusable LMDB read transaction and cursor: renewed for each Get, MultiGet
/// or iterator (<c>mdb_txn_renew</c>, <c>mdb_cursor_renew</c>) and reset after it
/// (<c>mdb_txn_reset</c>), so a read takes a fresh snapshot without creating a transaction — the
/// way LMDB's documentation recommends for a read-mostly thread. The environment is opened with
/// <c>MDB_NOTLS</c>, so the reader slot belongs to the transaction, not the thread, and an
/// iterator and a Get on one thread can each hold one. Not thread-safe: used by the thread that
/// took it (<see cref="LmdbReaders"/>) until it is given back.
/// </summary>
internal sealed class LmdbReader : IDisposable
{
    private readonly LmdbCursorState _iterator;
    private bool _cursorBound;

    public LmdbReader(LightningEnvironment env, LightningDatabase db)
    {
        Environment = env;
        Database = db;
        Transaction = env.BeginTransaction(TransactionBeginFlags.ReadOnly);
        Transaction.Reset();
        Cursor = null;
        _iterator = new LmdbCursorState(this);
    }

    public LightningEnvironment Environment { get; }

    public LightningDatabase Database { get; }

    public LightningTransaction Transaction { get; }

    /// <summary>The cursor, created on the first iterator and renewed after.</summary>
    public LightningCursor? Cursor { get; private set; }

    /// <summary>True while a Get or iterator uses it.</summary>
    public bool InUse { get; set; }

    /// <summary>Starts a read on the newest committed snapshot.</summary>
    public void Begin() => Transaction.Renew().ThrowOnError();

    /// <summary>Starts a read and positions nothing yet: the cursor bound to the renewed transaction.</summary>
    public LightningCursor BeginCursor()
    {
        Begin();
        if (Cursor == null)
        {
            Cursor = Transaction.CreateCursor(Database);
        }
        else if (_cursorBound)
        {
            Cursor.Renew(Transaction).ThrowOnError();
        }
        _cursorBound = true;
        return Cursor;
    }

    /// <summary>The reader's iterator state on a renewed snapshot; disposing it gives the reader back.</summary>
    public LmdbCursorState OpenIterator() => _iterator.Start();

    /// <summary>Ends the read: the snapshot is released, the handles kept for the next one.</summary>
    public void End() => Transaction.Reset();

    public void Dispose()
    {
        Cursor?.Dispose();
        Transaction.Dispose();
    }
}
