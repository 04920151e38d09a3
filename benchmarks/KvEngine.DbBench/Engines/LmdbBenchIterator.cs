using LightningDB;

namespace KvEngine.DbBench.Engines;

/// <summary>
/// An LMDB cursor for kvbench's workloads: the thread's reusable read transaction renewed (one
/// snapshot for the iterator's life) and its cursor positioned with <c>MDB_SET_RANGE</c>,
/// <c>MDB_FIRST</c>, <c>MDB_LAST</c>, <c>MDB_NEXT</c>, <c>MDB_PREV</c>. Keys and values are spans
/// over LMDB's memory map, valid until the next move. Dispose resets the transaction and gives the
/// reader back. One thread at a time; the state lives in the reader's <see cref="LmdbCursorState"/>
/// (a <c>using</c> variable of a struct type is read-only), made once per reader, so a seek allocates nothing.
/// </summary>
internal readonly struct LmdbBenchIterator : IBenchIterator
{
    private readonly LmdbCursorState _s;

    public LmdbBenchIterator(LmdbCursorState state) => _s = state;

    public bool Valid => _s.Valid;

    public ReadOnlySpan<byte> Key => _s.Key.AsSpan();

    public ReadOnlySpan<byte> Value => _s.Value.AsSpan();

    public void Seek(ReadOnlySpan<byte> key) => _s.Set(_s.Cursor.SetRange(key) == MDBResultCode.Success ? _s.Cursor.GetCurrent() : default);

    public void SeekToFirst() => _s.Set(_s.Cursor.First());

    public void SeekToLast() => _s.Set(_s.Cursor.Last());

    public void Next() => _s.Set(_s.Cursor.Next());

    public void Prev() => _s.Set(_s.Cursor.Previous());

    public void Dispose() => _s.Dispose();
}
