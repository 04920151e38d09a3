namespace KvEngine.Tests.Metamorphic;

/// <summary>
/// PrefixSameAsStart over a total-order iterator, for the model and for configurations without a
/// prefix extractor: after a seek the iteration is confined to the target's prefix (after
/// SeekToFirst / SeekToLast, to the prefix of the key found) and a key with another prefix, or out
/// of the domain of <see cref="KvPrefixExtractor.FixedPrefix"/>(<see cref="PrefixLength"/>),
/// ends it (not Valid), as the engine's iterator does with that extractor. Not thread-safe.
/// </summary>
internal sealed class ConfinedCursor : IMetaCursor
{
    /// <summary>The prefix length of the configurations with a prefix extractor.</summary>
    public const int PrefixLength = 3;

    private readonly IMetaCursor _inner;
    private byte[]? _prefix;
    private bool _outside;

    public ConfinedCursor(IMetaCursor inner) => _inner = inner;

    public bool Valid => !_outside && _inner.Valid;

    public ReadOnlySpan<byte> Key => _inner.Key;

    public ReadOnlySpan<byte> Value => _inner.Value;

    public void Seek(byte[] target)
    {
        _inner.Seek(target);
        Confine(target);
    }

    public void SeekForPrev(byte[] target)
    {
        _inner.SeekForPrev(target);
        Confine(target);
    }

    public void SeekToFirst()
    {
        _inner.SeekToFirst();
        Confine(_inner.Valid ? _inner.Key.ToArray() : null);
    }

    public void SeekToLast()
    {
        _inner.SeekToLast();
        Confine(_inner.Valid ? _inner.Key.ToArray() : null);
    }

    public void Next()
    {
        _inner.Next();
        Check();
    }

    public void Prev()
    {
        _inner.Prev();
        Check();
    }

    public void Dispose() => _inner.Dispose();

    private void Confine(byte[]? start)
    {
        _prefix = start != null && start.Length >= PrefixLength ? start[..PrefixLength] : null;
        Check();
    }

    private void Check() =>
        _outside = _inner.Valid && (_prefix == null || _inner.Key.Length < PrefixLength || !_inner.Key[..PrefixLength].SequenceEqual(_prefix));
}
