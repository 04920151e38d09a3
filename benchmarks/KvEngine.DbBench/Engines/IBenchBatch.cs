namespace KvEngine.DbBench.Engines;

/// <summary>
/// An engine's write batch as kvbench's workloads use it (puts, deletes and range deletions applied
/// atomically by <see cref="IBenchEngine{TIterator, TBatch}.Write"/>); a struct wrapping the engine's
/// own batch. One thread at a time.
/// </summary>
internal interface IBenchBatch : IDisposable
{
    void Clear();

    void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value);

    void Delete(ReadOnlySpan<byte> key);

    void DeleteRange(ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end);
}
