namespace KvEngine.Wal;

/// <summary>A handler that ignores every write: decoding with it only validates.</summary>
internal struct NullWriteBatchHandler : IWriteBatchHandler
{
    public readonly bool SeekColumnFamily(uint columnFamily) => true;

    public readonly void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
    {
    }

    public readonly void Delete(ReadOnlySpan<byte> key)
    {
    }

    public readonly void SingleDelete(ReadOnlySpan<byte> key)
    {
    }

    public readonly void DeleteRange(ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end)
    {
    }

    public readonly void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
    {
    }
}
