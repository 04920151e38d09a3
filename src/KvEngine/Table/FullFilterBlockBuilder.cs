using KvEngine.Compression;
using KvEngine.Filters;
using KvEngine.Util;

namespace KvEngine.Table;

/// <summary>
/// One filter over the whole table (RocksDB's FullFilterBlockBuilder): whole user keys go to the
/// policy's bits builder, which drops consecutive duplicates. Not thread-safe.
/// </summary>
internal sealed class FullFilterBlockBuilder : IFilterBlockBuilder
{
    private readonly IFilterBitsBuilder _bits;
    private readonly bool _wholeKeyFiltering;
    private long _added;

    public FullFilterBlockBuilder(IFilterPolicy policy, bool wholeKeyFiltering, bool optimizeForMemory = false)
    {
        _bits = policy.CreateBuilder(optimizeForMemory);
        _wholeKeyFiltering = wholeKeyFiltering;
        MetaIndexKey = TableFormat.FullFilterBlockPrefix + policy.Name;
    }

    public string MetaIndexKey { get; }

    public bool IsEmpty => _added == 0;

    public long EntriesAdded => _bits.KeyCount;

    public void Add(ReadOnlySpan<byte> userKey)
    {
        if (_wholeKeyFiltering)
        {
            _bits.AddKey(userKey);
            _added++;
        }
    }

    public BlockHandle Finish(ITableBlockWriter writer, out long filterSize)
    {
        using var filter = new ByteBuffer(4096, spillToNative: true); // a whole-table filter: megabytes, once
        _bits.Finish(filter);
        filterSize = filter.Length;
        return writer.WriteBlock(filter.WrittenSpan, CompressionType.None);
    }

    public void Dispose() => _bits.Dispose();
}
