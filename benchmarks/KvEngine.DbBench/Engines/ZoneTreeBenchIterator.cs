using ZoneTree;

namespace KvEngine.DbBench.Engines;

/// <summary>
/// A ZoneTree forward iterator (<see cref="IZoneTreeIterator{TKey, TValue}"/> over byte-array keys
/// and values) for kvbench's workloads. ZoneTree's <c>Seek</c> only positions before the first key
/// at or after the target; its <c>Next</c> then moves onto it, so <see cref="Seek"/> here is both
/// (RocksDB's Seek semantics) and <see cref="Valid"/> is ZoneTree's <c>HasCurrent</c>. The key is
/// copied into a new array per seek, as ZoneTree's API takes a <c>byte[]</c> key by reference.
/// ZoneTree iterators run one way only: <see cref="SeekToLast"/> and <see cref="Prev"/> are refused
/// (kvbench refuses readreverse for this engine before it runs). One thread at a time.
/// </summary>
internal readonly struct ZoneTreeBenchIterator : IBenchIterator
{
    private readonly IZoneTreeIterator<byte[], byte[]> _it;

    public ZoneTreeBenchIterator(IZoneTreeIterator<byte[], byte[]> it) => _it = it;

    public bool Valid => _it.HasCurrent;

    public ReadOnlySpan<byte> Key => _it.CurrentKey;

    public ReadOnlySpan<byte> Value => _it.CurrentValue;

    public void Seek(ReadOnlySpan<byte> key)
    {
        byte[] k = key.ToArray();
        _it.Seek(in k);
        _it.Next();
    }

    public void SeekToFirst()
    {
        _it.SeekFirst();
        _it.Next();
    }

    public void SeekToLast() => throw new NotSupportedException("ZoneTree iterators run forward only (a reverse iterator is a separate object); kvbench refuses readreverse for -engine=zonetree");

    public void Next() => _it.Next();

    public void Prev() => throw new NotSupportedException("ZoneTree iterators run forward only; kvbench refuses readreverse for -engine=zonetree");

    public void Dispose() => _it.Dispose();
}
