namespace KvEngine.DbBench.Engines;

/// <summary>A <see cref="KvIterator"/> for kvbench's workloads; every member forwards. One thread at a time.</summary>
internal readonly struct KvEngineBenchIterator : IBenchIterator
{
    private readonly KvIterator _it;

    public KvEngineBenchIterator(KvIterator it) => _it = it;

    public bool Valid => _it.Valid;

    public ReadOnlySpan<byte> Key => _it.Key;

    public ReadOnlySpan<byte> Value => _it.Value;

    public void Seek(ReadOnlySpan<byte> key) => _it.Seek(key);

    public void SeekToFirst() => _it.SeekToFirst();

    public void SeekToLast() => _it.SeekToLast();

    public void Next() => _it.Next();

    public void Prev() => _it.Prev();

    public void Dispose() => _it.Dispose();
}
