using KvEngine.Cache;
using KvEngine.Filters;

namespace KvEngine.Table;

/// <summary>
/// A filter (a full filter or one filter partition) in use by one lookup: held by its table reader
/// (nothing to release), a block cache entry (released back to the cache), or a cache value or a
/// reader loaded for this lookup alone (freed). Release exactly once. A readonly value; copies share
/// the one lease. Lets a batched lookup probe one filter for many keys with one cache lookup.
/// </summary>
internal readonly struct FilterLease
{
    private readonly LruHandle? _handle;
    private readonly LruCache? _cache;
    private readonly FilterCacheValue? _ownedValue;
    private readonly bool _ownsReader;

    private FilterLease(IFilterBitsReader reader, LruHandle? handle, LruCache? cache, FilterCacheValue? ownedValue, bool ownsReader)
    {
        Reader = reader;
        _handle = handle;
        _cache = cache;
        _ownedValue = ownedValue;
        _ownsReader = ownsReader;
    }

    public IFilterBitsReader Reader { get; }

    /// <summary>A filter its table reader keeps (or pins) for its whole life.</summary>
    public static FilterLease Borrowed(IFilterBitsReader reader) => new(reader, null, null, null, ownsReader: false);

    /// <summary>A block cache entry holding a <see cref="FilterCacheValue"/>.</summary>
    public static FilterLease Cached(in LruHandle handle, LruCache cache) => new(((FilterCacheValue)handle.Value).Reader, handle, cache, null, ownsReader: false);

    /// <summary>A cache value that did not go into the cache: freed on release.</summary>
    public static FilterLease Owned(FilterCacheValue value) => new(value.Reader, null, null, value, ownsReader: false);

    /// <summary>A reader loaded without a block cache: disposed on release.</summary>
    public static FilterLease OwnedReader(IFilterBitsReader reader) => new(reader, null, null, null, ownsReader: true);

    public void Release()
    {
        if (_handle is LruHandle handle)
        {
            _cache!.Release(handle);
        }
        else if (_ownedValue != null)
        {
            _ownedValue.Free();
        }
        else if (_ownsReader)
        {
            (Reader as IDisposable)?.Dispose();
        }
    }
}
