using KvEngine.Iterators;

namespace KvEngine.Tests.Iterators;

/// <summary>
/// Test wrapper: counts the moves made on an inner iterator and, when <see cref="FailAtMove"/> is
/// reached, throws <see cref="KvCorruptionException"/> instead of moving.
/// </summary>
internal sealed class ProbeIterator : InternalIterator
{
    private readonly InternalIterator _inner;

    public ProbeIterator(InternalIterator inner)
    {
        _inner = inner;
    }

    public int Moves { get; private set; }

    public int Seeks { get; private set; }

    /// <summary>1-based move number that throws; 0 never.</summary>
    public int FailAtMove { get; set; }

    public bool Disposed { get; private set; }

    public override bool Valid => _inner.Valid;

    public override ReadOnlySpan<byte> Key => _inner.Key;

    public override ReadOnlySpan<byte> Value => _inner.Value;

    public override void SeekToFirst()
    {
        Count(seek: true);
        _inner.SeekToFirst();
    }

    public override void SeekToLast()
    {
        Count(seek: true);
        _inner.SeekToLast();
    }

    public override void Seek(ReadOnlySpan<byte> target)
    {
        Count(seek: true);
        _inner.Seek(target);
    }

    public override void SeekForPrev(ReadOnlySpan<byte> target)
    {
        Count(seek: true);
        _inner.SeekForPrev(target);
    }

    public override void Next()
    {
        Count(seek: false);
        _inner.Next();
    }

    public override void Prev()
    {
        Count(seek: false);
        _inner.Prev();
    }

    protected override void Dispose(bool disposing)
    {
        Disposed = true;
        _inner.Dispose();
    }

    private void Count(bool seek)
    {
        Moves++;
        if (seek)
        {
            Seeks++;
        }
        if (FailAtMove != 0 && Moves == FailAtMove)
        {
            throw new KvCorruptionException("block checksum mismatch (injected)");
        }
    }
}
