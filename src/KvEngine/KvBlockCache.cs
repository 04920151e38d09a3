using KvEngine.Cache;

namespace KvEngine;

/// <summary>
/// A block cache (RocksDB's LRUCache): sharded LRU with a high-priority pool for index and filter
/// blocks, charged by the usable size of the native allocation holding each block plus a per-entry
/// overhead; optionally backed by a compressed secondary cache that keeps evicted blocks
/// compressed in size-class chunks. Pass one instance in <see cref="ColumnFamilyOptions.BlockCache"/> of
/// several databases to share it. Thread-safe. Dispose it after every database using it is closed.
/// </summary>
public sealed class KvBlockCache : IDisposable
{
    /// <param name="capacityBytes">Bytes of charge the cache holds.</param>
    /// <param name="numShardBits">log2 of the shard count; -1 derives it from the capacity (shards of at least 512 KiB, at most 64).</param>
    /// <param name="strictCapacity">Fail inserts (rocksdb.block.cache.add.failures) rather than exceed the capacity with pinned blocks.</param>
    /// <param name="highPriPoolRatio">Share of the capacity reserved for index and filter blocks (RocksDB 7.8: 0.5).</param>
    /// <param name="compressedSecondaryCacheSize">Bytes of the compressed secondary cache; 0 for none.</param>
    /// <param name="compressedSecondaryCacheCompression">LZ4 (default), Zstd or None.</param>
    /// <param name="compressedSecondaryCacheSplit">Cut secondary entries into allocator size-class chunks (PR 10287).</param>
    public KvBlockCache(
        long capacityBytes,
        int numShardBits = -1,
        bool strictCapacity = false,
        double highPriPoolRatio = 0.5,
        long compressedSecondaryCacheSize = 0,
        KvCompressionType compressedSecondaryCacheCompression = KvCompressionType.Lz4,
        bool compressedSecondaryCacheSplit = true)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(compressedSecondaryCacheSize);
        if (compressedSecondaryCacheSize > 0)
        {
            Secondary = new CompressedSecondaryCache(new CompressedSecondaryCacheOptions
            {
                Capacity = compressedSecondaryCacheSize,
                Compression = (Compression.CompressionType)(byte)compressedSecondaryCacheCompression,
                Split = compressedSecondaryCacheSplit,
            });
        }
        Primary = new LruCache(
            new LruCacheOptions
            {
                Capacity = capacityBytes,
                NumShardBits = numShardBits,
                StrictCapacity = strictCapacity,
                HighPriPoolRatio = highPriPoolRatio,
            },
            Secondary);
    }

    /// <summary>RocksDB's default when no cache is configured: 8 MiB.</summary>
    public const long DefaultCapacity = 8L << 20;

    /// <summary>Bytes of charge the cache holds before it evicts (RocksDB's GetCapacity).</summary>
    public long Capacity => Primary.Capacity;

    /// <summary>log2 of the number of shards the cache is split into.</summary>
    public int NumShardBits => Primary.NumShardBits;

    /// <summary>Bytes charged by the blocks held (usable allocation sizes plus entry overhead).</summary>
    public long Usage => Primary.Usage;

    /// <summary>Bytes charged by blocks in use by readers.</summary>
    public long PinnedUsage => Primary.PinnedUsage;

    /// <summary>Bytes charged in the compressed secondary cache (0 without one).</summary>
    public long SecondaryUsage => Secondary?.Inner.Usage ?? 0;

    internal LruCache Primary { get; }

    internal CompressedSecondaryCache? Secondary { get; }

    /// <summary>
    /// Changes the capacity (RocksDB's SetCapacity); when it shrinks, unpinned blocks are evicted
    /// until the usage fits.
    /// </summary>
    /// <param name="capacityBytes">The new capacity in bytes of charge.</param>
    public void SetCapacity(long capacityBytes) => Primary.SetCapacity(capacityBytes);

    /// <summary>Frees every cached block. Call it only after every database using the cache is closed.</summary>
    public void Dispose()
    {
        Primary.Dispose();
        Secondary?.Dispose();
    }
}
