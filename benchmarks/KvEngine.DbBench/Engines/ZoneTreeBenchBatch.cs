using ZoneTree;

namespace KvEngine.DbBench.Engines;

/// <summary>
/// A write batch for kvbench's ZoneTree engine. ZoneTree has no write batch outside its
/// transactions, so this one records the puts and deletes and <see cref="ZoneTreeBench.Write"/>
/// applies them one by one: not atomic, which no workload kvbench allows on ZoneTree relies on
/// (<see cref="ZoneTreeBench.Validate"/> refuses the range-tombstone flags, the only batches the
/// fills write). Range deletions are refused. One thread at a time.
/// </summary>
internal readonly struct ZoneTreeBenchBatch : IBenchBatch
{
    // (key, value) pairs in order; a null value is a deletion.
    private readonly List<KeyValuePair<byte[], byte[]?>> _ops;

    public ZoneTreeBenchBatch() => _ops = new List<KeyValuePair<byte[], byte[]?>>();

    public void Clear() => _ops.Clear();

    public void Put(int family, ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) => _ops.Add(new(key.ToArray(), value.ToArray()));

    public void Delete(int family, ReadOnlySpan<byte> key) => _ops.Add(new(key.ToArray(), null));

    public void DeleteRange(int family, ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end) =>
        throw new NotSupportedException("ZoneTree has no range deletion; kvbench refuses the range-tombstone flags for -engine=zonetree");

    /// <summary>Applies the recorded operations to <paramref name="tree"/> in order.</summary>
    public void ApplyTo(IZoneTree<byte[], byte[]> tree)
    {
        foreach (KeyValuePair<byte[], byte[]?> op in _ops)
        {
            byte[] key = op.Key;
            if (op.Value is byte[] value)
            {
                tree.Upsert(in key, in value);
            }
            else
            {
                tree.ForceDelete(in key);
            }
        }
    }

    public void Dispose() => _ops.Clear();
}
