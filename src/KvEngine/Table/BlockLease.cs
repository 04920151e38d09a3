using KvEngine.Cache;

namespace KvEngine.Table;

/// <summary>
/// A block in use by one reader: either a block cache entry (released back to the cache) or a
/// block owned by the reader alone (disposed). Release exactly once. A readonly value; copies share the one lease.
/// </summary>
internal readonly struct BlockLease
{
    private readonly LruHandle? _handle;
    private readonly LruCache? _cache;

    public BlockLease(Block block, LruHandle? handle, LruCache? cache)
    {
        Block = block;
        _handle = handle;
        _cache = cache;
    }

    public Block Block { get; }

    /// <summary>True when the block came from (or went into) the cache.</summary>
    public bool IsCached => _handle != null;

    public void Release()
    {
        if (_handle != null)
        {
            _cache!.Release(_handle);
        }
        else
        {
            Block.Dispose();
        }
    }
}
