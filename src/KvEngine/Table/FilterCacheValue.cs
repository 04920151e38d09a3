using KvEngine.Cache;
using KvEngine.Filters;

namespace KvEngine.Table;

/// <summary>
/// A loaded filter held by the block cache (cache_index_and_filter_blocks). A FastLocalBloom
/// filter in native memory is charged at its allocation's usable size and can go down to the
/// secondary cache as its raw bit array; other filter readers are charged their block length and
/// stay in the primary; so do filter partitions (their probe counts differ from partition to
/// partition, which the bare bit array would not carry). Immutable until freed; queries are thread-safe.
/// </summary>
internal sealed class FilterCacheValue : CacheValue
{
    private readonly long _blockLength;
    private readonly bool _demotable;

    public FilterCacheValue(IFilterBitsReader reader, long blockLength, bool demotable = true)
    {
        Reader = reader;
        _blockLength = blockLength;
        _demotable = demotable;
    }

    public IFilterBitsReader Reader { get; }

    public override CacheEntryRole Role => CacheEntryRole.Filter;

    public override long RequestedBytes => Reader is FastLocalBloomNativeReader n ? n.BitsLength : _blockLength;

    public override long AllocatedBytes => Reader is FastLocalBloomNativeReader n ? n.MemoryUsage : _blockLength;

    public override bool CanDemote => _demotable && Reader is FastLocalBloomNativeReader;

    public override ReadOnlySpan<byte> Contents => Reader is FastLocalBloomNativeReader n ? n.Bits : [];

    public override void Free() => (Reader as IDisposable)?.Dispose();
}
