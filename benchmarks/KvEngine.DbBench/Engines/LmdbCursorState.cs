using LightningDB;

namespace KvEngine.DbBench.Engines;

/// <summary>
/// The mutable part of an <see cref="LmdbBenchIterator"/>: its reader, the cursor and the entry it
/// is on (LMDB's key and value, pointers into the map). One per <see cref="LmdbReader"/>, reused by
/// each iterator the reader serves (<see cref="Start"/> ... <see cref="Dispose"/>). A result other
/// than success or not-found throws <see cref="LightningException"/>. One thread at a time.
/// </summary>
internal sealed class LmdbCursorState : IDisposable
{
    private readonly LmdbReader _reader;
    private bool _open;

    public LmdbCursorState(LmdbReader reader) => _reader = reader;

    /// <summary>The reader's cursor, bound to its renewed transaction while open.</summary>
    public LightningCursor Cursor { get; private set; } = null!;

    /// <summary>Renews the reader's snapshot and binds the cursor to it, unpositioned.</summary>
    public LmdbCursorState Start()
    {
        Cursor = _reader.BeginCursor();
        Valid = false;
        _open = true;
        return this;
    }

    public bool Valid { get; private set; }

    public MDBValue Key { get; private set; }

    public MDBValue Value { get; private set; }

    public void Set((MDBResultCode Code, MDBValue Key, MDBValue Value) r)
    {
        r.ThrowOnReadError();
        Valid = r.Code == MDBResultCode.Success;
        Key = Valid ? r.Key : default;
        Value = Valid ? r.Value : default;
    }

    public void Dispose()
    {
        if (_open)
        {
            _open = false;
            Valid = false;
            LmdbReaders.Give(_reader);
        }
    }
}
