using KvEngine.Cache;
using KvEngine.Filters;
using KvEngine.Util;

namespace KvEngine.Table;

/// <summary>
/// A loaded filter held by the block cache (cache_index_and_filter_blocks). A FastLocalBloom
/// filter in native memory is charged at its allocation's usable size and can go down to the
/// secondary cache as its raw bit array; other filter readers are charged their block length and
/// stay in the primary; so do filter partitions (their probe counts differ from partition to
/// partition, which the bare bit array would not carry). Immutable until freed; queries are thread-safe.
/// <para>
/// Values come from <see cref="Rent"/> and have one owner at a time (the cache entry, or the
/// reader that loaded the filter for one query); <see cref="Free"/> (once) disposes the filter
/// reader and recycles the object through <see cref="ThreadLocalPool{T}"/>, so a filter-block cache
/// miss creates no managed object in steady state. Any use after Free is a bug.
/// </para>
/// </summary>
internal sealed class FilterCacheValue : CacheValue
{
    private IFilterBitsReader? _reader;
    private long _blockLength;
    private bool _demotable;

    private FilterCacheValue()
    {
    }

    /// <summary>A value owning <paramref name="reader"/> (a pooled object when one is free on this thread).</summary>
    public static FilterCacheValue Rent(IFilterBitsReader reader, long blockLength, bool demotable = true)
    {
        ArgumentNullException.ThrowIfNull(reader);
        FilterCacheValue value = ThreadLocalPool<FilterCacheValue>.TryRent() ?? new FilterCacheValue();
        value._reader = reader;
        value._blockLength = blockLength;
        value._demotable = demotable;
        return value;
    }

    public IFilterBitsReader Reader => _reader ?? throw new ObjectDisposedException(nameof(FilterCacheValue));

    public override CacheEntryRole Role => CacheEntryRole.Filter;

    public override long RequestedBytes => _reader is FastLocalBloomNativeReader n ? n.BitsLength : _blockLength;

    public override long AllocatedBytes => _reader is FastLocalBloomNativeReader n ? n.MemoryUsage : _blockLength;

    public override bool CanDemote => _demotable && _reader is FastLocalBloomNativeReader;

    public override ReadOnlySpan<byte> Contents => _reader is FastLocalBloomNativeReader n ? n.Bits : [];

    public override void Free()
    {
        IFilterBitsReader? reader = _reader;
        if (reader == null)
        {
            return;
        }
        _reader = null;
        _blockLength = 0;
        (reader as IDisposable)?.Dispose();
        ThreadLocalPool<FilterCacheValue>.Return(this);
    }
}
