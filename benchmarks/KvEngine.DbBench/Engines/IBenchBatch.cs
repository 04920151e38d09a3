namespace KvEngine.DbBench.Engines;

/// <summary>
/// An engine's write batch as kvbench's workloads use it (puts, deletes and range deletions applied
/// atomically by <see cref="IBenchEngine{TIterator, TBatch}.Write"/>); a struct wrapping the engine's
/// own batch. One thread at a time.
/// </summary>
internal interface IBenchBatch : IDisposable
{
    void Clear();

    /// <summary>Puts into column family <paramref name="family"/> (0 = default), as the other members.</summary>
    void Put(int family, ReadOnlySpan<byte> key, ReadOnlySpan<byte> value);

    void Delete(int family, ReadOnlySpan<byte> key);

    void DeleteRange(int family, ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end);
}
