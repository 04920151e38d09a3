namespace KvEngine.DbBench.Engines;

/// <summary>A KvEngine <see cref="WriteBatch"/> for kvbench's workloads; every member forwards. One thread at a time.</summary>
internal readonly struct KvEngineBenchBatch : IBenchBatch
{
    public KvEngineBenchBatch(WriteBatch batch) => Batch = batch;

    public WriteBatch Batch { get; }

    public void Clear() => Batch.Clear();

    public void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) => Batch.Put(key, value);

    public void Delete(ReadOnlySpan<byte> key) => Batch.Delete(key);

    public void DeleteRange(ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end) => Batch.DeleteRange(begin, end);

    public void Dispose() => Batch.Dispose();
}
