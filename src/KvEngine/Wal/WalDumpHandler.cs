namespace KvEngine.Wal;

/// <summary>Collects a batch's writes as <see cref="WalOperation"/>s for <see cref="WalFileReader"/>. Accepts every family.</summary>
internal struct WalDumpHandler : IWriteBatchHandler
{
    private uint _family;

    public WalDumpHandler() => Operations = [];

    public List<WalOperation> Operations { get; }

    public bool SeekColumnFamily(uint columnFamily)
    {
        _family = columnFamily;
        return true;
    }

    public readonly void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) => Add(WalOperationType.Put, key, value);

    public readonly void Delete(ReadOnlySpan<byte> key) => Add(WalOperationType.Delete, key, default);

    public readonly void SingleDelete(ReadOnlySpan<byte> key) => Add(WalOperationType.SingleDelete, key, default);

    public readonly void DeleteRange(ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end) => Add(WalOperationType.DeleteRange, begin, end);

    public readonly void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) => Add(WalOperationType.Merge, key, value);

    private readonly void Add(WalOperationType type, ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) =>
        Operations.Add(new WalOperation(type, _family, key.ToArray(), value.ToArray()));
}
