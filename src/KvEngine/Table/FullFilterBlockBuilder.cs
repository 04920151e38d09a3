using KvEngine.Compression;
using KvEngine.Filters;
using KvEngine.Util;

namespace KvEngine.Table;

/// <summary>
/// One filter over the whole table (RocksDB's FullFilterBlockBuilder): whole user keys and/or key
/// prefixes (<see cref="FilterKeyAdder"/>) go to the policy's bits builder, which drops
/// consecutive duplicates. Not thread-safe.
/// </summary>
internal sealed class FullFilterBlockBuilder : IFilterBlockBuilder
{
    private readonly IFilterBitsBuilder _bits;
    private readonly FilterKeyAdder _keys;
    private long _added;

    public FullFilterBlockBuilder(IFilterPolicy policy, bool wholeKeyFiltering, bool optimizeForMemory = false, KvPrefixExtractor? prefixExtractor = null)
    {
        _bits = policy.CreateBuilder(optimizeForMemory);
        _keys = new FilterKeyAdder(prefixExtractor, wholeKeyFiltering);
        MetaIndexKey = TableFormat.FullFilterBlockPrefix + policy.Name;
    }

    public string MetaIndexKey { get; }

    public bool IsEmpty => _added == 0;

    public long EntriesAdded => _bits.KeyCount;

    /// <summary>
    /// Presizes the filter for <paramref name="userKeys"/> keys when it holds whole user keys only
    /// (with a prefix extractor the number of prefixes is not known ahead).
    /// </summary>
    public void ExpectKeys(long userKeys)
    {
        if (_keys.Extractor == null && _keys.WholeKeyFiltering) // the bits builder refuses once keys came
        {
            _bits.TryPresize(userKeys);
        }
    }

    public void Add(ReadOnlySpan<byte> userKey)
    {
        _added += _keys.Add(_bits, userKey);
    }

    public BlockHandle Finish(ITableBlockWriter writer, out long filterSize)
    {
        using var filter = new ByteBuffer(4096, spillToNative: true); // a whole-table filter: megabytes, once
        _bits.Finish(filter);
        filterSize = filter.Length;
        return writer.WriteBlock(filter.WrittenSpan, CompressionType.None);
    }

    public void Dispose()
    {
        _bits.Dispose();
        _keys.Dispose();
    }
}
