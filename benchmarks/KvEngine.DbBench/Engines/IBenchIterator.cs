namespace KvEngine.DbBench.Engines;

/// <summary>
/// An engine's iterator as kvbench's workloads use it; a struct wrapping the engine's own iterator,
/// so calls through a generic <c>TIterator</c> are direct. One thread at a time; the key and value
/// spans are valid until the next move.
/// </summary>
internal interface IBenchIterator : IDisposable
{
    bool Valid { get; }

    ReadOnlySpan<byte> Key { get; }

    ReadOnlySpan<byte> Value { get; }

    void Seek(ReadOnlySpan<byte> key);

    void SeekToFirst();

    void SeekToLast();

    void Next();

    void Prev();
}
