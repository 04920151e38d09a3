namespace KvEngine.Tests.Metamorphic;

/// <summary>
/// An engine iterator seen as an <see cref="IMetaCursor"/>: with a keyspace prefix (a
/// <see cref="MetaConfig.SingleKeyspace"/> configuration) seek targets get it and keys lose it;
/// the iterator's bounds keep it inside the prefix. Not thread-safe.
/// </summary>
internal sealed class DbCursor : IMetaCursor
{
    private readonly KvIterator _it;
    private readonly byte[]? _prefix;

    public DbCursor(KvIterator it, byte[]? prefix)
    {
        _it = it;
        _prefix = prefix;
    }

    public bool Valid => _it.Valid;

    public ReadOnlySpan<byte> Key => _prefix == null ? _it.Key : _it.Key[_prefix.Length..];

    public ReadOnlySpan<byte> Value => _it.Value;

    public void Seek(byte[] target) => _it.Seek(DbView.Prefixed(_prefix, target));

    public void SeekForPrev(byte[] target) => _it.SeekForPrev(DbView.Prefixed(_prefix, target));

    public void SeekToFirst() => _it.SeekToFirst();

    public void SeekToLast() => _it.SeekToLast();

    public void Next() => _it.Next();

    public void Prev() => _it.Prev();

    public void Dispose() => _it.Dispose();
}
