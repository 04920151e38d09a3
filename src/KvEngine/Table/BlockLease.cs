using KvEngine.Cache;

namespace KvEngine.Table;

/// <summary>
/// A block in use by one reader: a block cache entry (released back to the cache; a view of a
/// native entry's bytes goes back to its pool first), a block owned by this lease alone
/// (disposed), or a block borrowed from its table reader (nothing to do). Release exactly once. A
/// readonly value; copies share the one lease.
/// </summary>
internal readonly struct BlockLease
{
    private readonly LruHandle? _handle;
    private readonly LruCache? _cache;
    private readonly bool _owned;

    public BlockLease(Block block, LruHandle? handle, LruCache? cache, bool owned = true)
    {
        Block = block;
        _handle = handle;
        _cache = cache;
        _owned = owned;
    }

    public Block Block { get; }

    /// <summary>A lease on the cache entry <paramref name="handle"/>: its native block through a pooled view, or its block object.</summary>
    public static BlockLease Cached(in LruHandle handle, LruCache cache, string fileName, string kind) =>
        new(handle.IsNativeBlock ? Block.RentView(handle, fileName, kind) : (Block)handle.Value, handle, cache);

    /// <summary>True when the block came from (or went into) the cache.</summary>
    public bool IsCached => _handle != null;

    public void Release()
    {
        if (_handle is LruHandle handle)
        {
            if (Block.IsView)
            {
                Block.Dispose(); // frees no bytes: the view goes back to its pool before the entry's last use ends
            }
            _cache!.Release(handle);
        }
        else if (_owned)
        {
            Block.Dispose();
        }
    }
}
