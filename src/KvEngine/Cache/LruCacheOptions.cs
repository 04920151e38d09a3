using KvEngine.Memory;

namespace KvEngine.Cache;

/// <summary>Settings of an <see cref="LruCache"/> (RocksDB's LRUCacheOptions). Immutable record.</summary>
internal sealed record LruCacheOptions
{
    /// <summary>Bytes of charge the cache may hold (split evenly across shards).</summary>
    public long Capacity { get; init; } = 8L << 20;

    /// <summary>log2 of the shard count; -1 derives it from the capacity as RocksDB does (shards of at least 512 KiB, at most 64 shards).</summary>
    public int NumShardBits { get; init; } = -1;

    /// <summary>Fail inserts that do not fit after evicting every unreferenced entry.</summary>
    public bool StrictCapacity { get; init; }

    /// <summary>Share of the capacity kept for high-priority (index and filter) entries (RocksDB 7.8: 0.5).</summary>
    public double HighPriPoolRatio { get; init; } = 0.5;

    /// <summary>
    /// Where the cache's entries (<see cref="LruEntry"/>) come from. A native block inserted with
    /// <see cref="LruCache.TryInsertBlock"/> is held in its entry (no managed object) only when its
    /// buffer comes from this allocator too; otherwise the entry keeps the block object.
    /// </summary>
    public NativeAllocator Allocator { get; init; } = NativeAllocator.Shared;

    /// <summary>Frees the native records inserted with <see cref="LruCache.InsertNative"/> (none without).</summary>
    public INativeValueOwner? NativeValues { get; init; }

    /// <summary>Charged per entry on top of the value's usable size: the entry (64 bytes) and its table slot.</summary>
    public int EntryOverheadBytes { get; init; } = 96;

    /// <summary>Smallest shard <see cref="NumShardBits"/> = -1 aims for (RocksDB: 512 KiB).</summary>
    public long MinShardBytes { get; init; } = 512 << 10;

    public void Validate()
    {
        ArgumentOutOfRangeException.ThrowIfNegative(Capacity, nameof(Capacity));
        ArgumentOutOfRangeException.ThrowIfLessThan(NumShardBits, -1, nameof(NumShardBits));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(NumShardBits, 19, nameof(NumShardBits));
        if (double.IsNaN(HighPriPoolRatio) || HighPriPoolRatio < 0 || HighPriPoolRatio > 1)
        {
            throw new ArgumentOutOfRangeException(nameof(HighPriPoolRatio), HighPriPoolRatio, "The high-priority pool ratio must be in [0, 1].");
        }
        ArgumentOutOfRangeException.ThrowIfNegative(EntryOverheadBytes, nameof(EntryOverheadBytes));
        ArgumentOutOfRangeException.ThrowIfLessThan(MinShardBytes, 1, nameof(MinShardBytes));
        ArgumentNullException.ThrowIfNull(Allocator, nameof(Allocator));
    }

    /// <summary>RocksDB's GetDefaultCacheShardBits: one bit per doubling of capacity / 512 KiB, at most 6.</summary>
    public static int DefaultShardBits(long capacity, long minShardBytes)
    {
        int bits = 0;
        long shards = capacity / minShardBytes;
        while ((shards >>= 1) != 0)
        {
            if (++bits >= 6)
            {
                return bits;
            }
        }
        return bits;
    }
}
