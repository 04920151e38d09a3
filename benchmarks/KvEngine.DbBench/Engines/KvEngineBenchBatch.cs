namespace KvEngine.DbBench.Engines;

/// <summary>A KvEngine <see cref="WriteBatch"/> for kvbench's workloads; every member forwards. One thread at a time.</summary>
internal readonly struct KvEngineBenchBatch : IBenchBatch
{
    private readonly ColumnFamilyHandle[] _families;

    /// <param name="batch">The batch.</param>
    /// <param name="families">The handles by family index (index 0 = default).</param>
    public KvEngineBenchBatch(WriteBatch batch, ColumnFamilyHandle[] families)
    {
        Batch = batch;
        _families = families;
    }

    public WriteBatch Batch { get; }

    public void Clear() => Batch.Clear();

    public void Put(int family, ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) => Batch.Put(_families[family], key, value);

    public void Delete(int family, ReadOnlySpan<byte> key) => Batch.Delete(_families[family], key);

    public void DeleteRange(int family, ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end) => Batch.DeleteRange(_families[family], begin, end);

    public void Dispose() => Batch.Dispose();
}
