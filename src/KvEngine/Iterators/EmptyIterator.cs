namespace KvEngine.Iterators;

/// <summary>
/// An iterator over nothing: never Valid, every seek a no-op. Stateless; owns nothing.
/// </summary>
internal sealed class EmptyIterator : InternalIterator
{
    public override bool Valid => false;

    public override ReadOnlySpan<byte> Key => throw NotPositioned();

    public override ReadOnlySpan<byte> Value => throw NotPositioned();

    public override void SeekToFirst()
    {
    }

    public override void SeekToLast()
    {
    }

    public override void Seek(ReadOnlySpan<byte> target)
    {
    }

    public override void SeekForPrev(ReadOnlySpan<byte> target)
    {
    }

    public override void Next() => throw NotPositioned();

    public override void Prev() => throw NotPositioned();

    private static InvalidOperationException NotPositioned() =>
        new("The iterator is not positioned on an entry.");
}
