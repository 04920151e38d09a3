namespace KvEngine.Tests.Metamorphic;

/// <summary>
/// An iterator of a metamorphic run, over one family's logical keys (a configuration that maps
/// families into one keyspace strips its key prefix): the engine's <see cref="KvIterator"/> or the
/// model's sorted list. Callers move it only while <see cref="Valid"/> (Next, Prev) or by a seek.
/// Not thread-safe.
/// </summary>
internal interface IMetaCursor : IDisposable
{
    bool Valid { get; }

    ReadOnlySpan<byte> Key { get; }

    ReadOnlySpan<byte> Value { get; }

    void Seek(byte[] target);

    void SeekForPrev(byte[] target);

    void SeekToFirst();

    void SeekToLast();

    void Next();

    void Prev();
}
