using KvEngine.Cache;

namespace KvEngine.Table;

/// <summary>
/// The index or filter partitions a <see cref="TableReader"/> keeps for its whole life (RocksDB's
/// partition_map_ under partition pinning): each a pinned block cache handle, or, without a cache
/// (or when the cache had no room), a value the reader owns. Sorted by block offset, found by
/// binary search without allocating. Immutable after construction, so lookups are thread-safe;
/// <see cref="Dispose"/> (once, when the reader is disposed) unpins or frees everything.
/// </summary>
internal sealed class PinnedPartitions : IDisposable
{
    private readonly ulong[] _offsets;
    private readonly CacheValue[] _values;
    private readonly LruHandle?[] _handles;
    private readonly LruCache? _cache;

    /// <param name="offsets">Partition offsets, strictly increasing.</param>
    /// <param name="values">The partition at each offset.</param>
    /// <param name="handles">The pinned cache handle of each partition, or null when the value is owned here.</param>
    /// <param name="cache">The cache holding the pinned handles (null when none is pinned).</param>
    public PinnedPartitions(ulong[] offsets, CacheValue[] values, LruHandle?[] handles, LruCache? cache)
    {
        if (offsets.Length != values.Length || offsets.Length != handles.Length)
        {
            throw new ArgumentException("One value and one handle per offset.", nameof(values));
        }
        _offsets = offsets;
        _values = values;
        _handles = handles;
        _cache = cache;
        for (int i = 0; i < values.Length; i++)
        {
            Bytes += values[i].AllocatedBytes;
            if (handles[i] == null)
            {
                OwnedBytes += values[i].AllocatedBytes;
            }
        }
    }

    public int Count => _offsets.Length;

    /// <summary>Bytes the partitions occupy (allocated sizes).</summary>
    public long Bytes { get; }

    /// <summary>Bytes of the partitions owned here rather than pinned in the block cache (counted by neither the cache's usage nor its pinned usage).</summary>
    public long OwnedBytes { get; }

    /// <summary>The partition starting at <paramref name="offset"/>, or null.</summary>
    public CacheValue? Find(ulong offset)
    {
        int i = Array.BinarySearch(_offsets, offset);
        return i >= 0 ? _values[i] : null;
    }

    public void Dispose()
    {
        for (int i = 0; i < _values.Length; i++)
        {
            if (_handles[i] is LruHandle h)
            {
                _cache!.Release(h);
            }
            else
            {
                _values[i].Free();
            }
        }
    }
}
