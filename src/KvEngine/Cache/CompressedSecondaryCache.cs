using System.Buffers;
using KvEngine.Compression;
using KvEngine.Memory;

namespace KvEngine.Cache;

/// <summary>
/// RocksDB 7.8's compressed secondary cache: an <see cref="LruCache"/> of
/// <see cref="CompressedSecondaryEntry"/>s (native records the inner cache holds, no managed object
/// per entry; this cache frees them as their <see cref="INativeValueOwner"/>) below the block cache. Admission: the first demotion of
/// a key leaves a <see cref="CachePlaceholder"/> (charged only the entry overhead), the second
/// stores the value, compressed (filters raw; a compression that saves nothing keeps the raw bytes)
/// and cut into size-class chunks when <see cref="CompressedSecondaryCacheOptions.Split"/>.
/// A promotion merges, checks the CRC, decompresses into a new native buffer and erases the entry;
/// a corrupt entry is erased and reported as a miss.
/// Thread-safe (the inner cache's locks; compression runs outside them).
/// </summary>
internal sealed class CompressedSecondaryCache : ISecondaryCache, INativeValueOwner, IDisposable
{
    private readonly CompressedSecondaryCacheOptions _options;
    private readonly LruCache _cache;
    private long _corruptDropped;

    public CompressedSecondaryCache(CompressedSecondaryCacheOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        _options = options;
        _cache = new LruCache(new LruCacheOptions
        {
            Capacity = options.Capacity,
            NumShardBits = options.NumShardBits,
            HighPriPoolRatio = 0,
            EntryOverheadBytes = options.EntryOverheadBytes,
            Allocator = options.Allocator,
            NativeValues = this,
        });
    }

    public CompressedSecondaryCacheOptions Options => _options;

    /// <summary>The inner cache (usage, counts).</summary>
    public LruCache Inner => _cache;

    /// <summary>Corrupt entries found and dropped by lookups.</summary>
    public long CorruptEntriesDropped => Interlocked.Read(ref _corruptDropped);

    public void Demote(in CacheKey key, ReadOnlySpan<byte> contents, CacheEntryRole role)
    {
        if (_cache.Lookup(key) is not LruHandle h)
        {
            _cache.Insert(key, CachePlaceholder.Instance, CachePriority.Low);
            return;
        }
        bool placeholder = h.IsPlaceholder;
        _cache.Release(h);
        if (!placeholder)
        {
            return; // already stored
        }
        CompressedSecondaryEntry entry = Compress(contents, role);
        _cache.InsertNative(key, entry.Record, role, CachePriority.Low);
    }

    /// <summary>The entry behind <paramref name="handle"/>, a handle of <see cref="Inner"/> on a stored value.</summary>
    internal CompressedSecondaryEntry EntryOf(in LruHandle handle) => new(handle.NativeValue, _options.Allocator);

    public void FreeNativeValue(nint value) => new CompressedSecondaryEntry(value, _options.Allocator).Free();

    public bool TryPromote(in CacheKey key, out NativeBuffer contents, out CacheEntryRole role, KvStatistics? stats)
    {
        contents = default;
        role = default;
        if (_cache.Lookup(key) is not LruHandle h)
        {
            stats?.Record(Ticker.SecondaryCacheMisses);
            return false;
        }
        if (!h.IsNativeValue)
        {
            _cache.Release(h);
            stats?.Record(Ticker.CompressedSecondaryCacheDummyHits);
            stats?.Record(Ticker.SecondaryCacheMisses);
            return false;
        }
        CompressedSecondaryEntry entry = EntryOf(h);
        bool ok;
        long requested = entry.RequestedBytes;
        long allocated = entry.AllocatedBytes;
        try
        {
            ok = TryMaterialize(entry, out contents);
            role = entry.Role;
        }
        finally
        {
            _cache.Release(h);
        }
        _cache.Erase(key); // frees the entry, unless another promotion of the key still holds it
        if (!ok)
        {
            Interlocked.Increment(ref _corruptDropped);
            stats?.Record(Ticker.SecondaryCacheMisses);
            return false;
        }
        if (stats != null)
        {
            stats.Record(Ticker.SecondaryCacheHits);
            stats.Record(Ticker.CompressedSecondaryCacheHits);
            stats.Record(Ticker.SecondaryCachePromotedRequestedBytes, requested);
            stats.Record(Ticker.SecondaryCachePromotedAllocatedBytes, allocated);
        }
        return true;
    }

    public void Dispose() => _cache.Dispose();

    /// <summary>Builds the stored form of <paramref name="raw"/> (see the type's comment).</summary>
    internal CompressedSecondaryEntry Compress(ReadOnlySpan<byte> raw, CacheEntryRole role)
    {
        CompressionType type = role == CacheEntryRole.Filter ? CompressionType.None : _options.Compression;
        if (type == CompressionType.None || raw.Length == 0)
        {
            return CompressedSecondaryEntry.Create(raw, raw.Length, CompressionType.None, role, _options.Allocator, _options.Split);
        }
        int bound = type == CompressionType.Lz4 ? Lz4Codec.CompressBound(raw.Length) : ZstdCodec.CompressBound(raw.Length);
        byte[] scratch = ArrayPool<byte>.Shared.Rent(bound);
        try
        {
            int n = type == CompressionType.Lz4
                ? Lz4Codec.Compress(raw, scratch, _options.CompressionLevel > 0 ? _options.CompressionLevel : 1)
                : ZstdCodec.Compress(raw, scratch, _options.CompressionLevel > 0 ? _options.CompressionLevel : ZstdCodec.DefaultLevel);
            if (n <= 0 || n >= raw.Length)
            {
                return CompressedSecondaryEntry.Create(raw, raw.Length, CompressionType.None, role, _options.Allocator, _options.Split);
            }
            return CompressedSecondaryEntry.Create(scratch.AsSpan(0, n), raw.Length, type, role, _options.Allocator, _options.Split);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(scratch);
        }
    }

    /// <summary>Merges, verifies and decompresses <paramref name="entry"/> into a new buffer; false (nothing allocated) when it is corrupt.</summary>
    internal bool TryMaterialize(CompressedSecondaryEntry entry, out NativeBuffer contents)
    {
        contents = default;
        byte[] merged = ArrayPool<byte>.Shared.Rent(Math.Max(1, entry.StoredLength));
        try
        {
            Span<byte> stored = merged.AsSpan(0, entry.StoredLength);
            if (!entry.TryMerge(stored))
            {
                return false;
            }
            NativeBuffer output = _options.Allocator.Allocate(entry.UncompressedLength, use: NativeUse.SecondaryCache);
            bool good;
            switch (entry.Compression)
            {
                case CompressionType.None:
                    stored.CopyTo(output.Span);
                    good = true;
                    break;
                case CompressionType.Lz4:
                    good = Lz4Codec.Decompress(stored, output.Span) == entry.UncompressedLength;
                    break;
                default:
                    good = ZstdCodec.Decompress(stored, output.Span) == entry.UncompressedLength;
                    break;
            }
            if (!good)
            {
                output.Dispose();
                return false;
            }
            contents = output;
            return true;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(merged);
        }
    }
}
