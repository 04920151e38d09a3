using KvEngine.Compression;
using KvEngine.Memory;

namespace KvEngine.Cache;

/// <summary>Settings of a <see cref="CompressedSecondaryCache"/> (RocksDB's CompressedSecondaryCacheOptions). Immutable record.</summary>
internal sealed record CompressedSecondaryCacheOptions
{
    public long Capacity { get; init; } = 32L << 20;

    /// <summary>-1 derives it from the capacity, as for the primary cache.</summary>
    public int NumShardBits { get; init; } = -1;

    /// <summary>LZ4 (RocksDB's default), ZSTD, or None.</summary>
    public CompressionType Compression { get; init; } = CompressionType.Lz4;

    /// <summary>Codec level: LZ4 acceleration (1) or ZSTD level (3).</summary>
    public int CompressionLevel { get; init; } = -1;

    /// <summary>Cut stored values into size-class chunks (PR 10287); false keeps each in one exact allocation.</summary>
    public bool Split { get; init; } = true;

    /// <summary>Where chunks are allocated.</summary>
    public NativeAllocator Allocator { get; init; } = NativeAllocator.Shared;

    /// <summary>Per-entry overhead charged, as in the primary cache.</summary>
    public int EntryOverheadBytes { get; init; } = 96;

    public void Validate()
    {
        ArgumentOutOfRangeException.ThrowIfNegative(Capacity, nameof(Capacity));
        if (Compression is not (CompressionType.None or CompressionType.Lz4 or CompressionType.Zstd))
        {
            throw new ArgumentException($"The compressed secondary cache supports None, LZ4 and ZSTD, not {Compression}.", nameof(Compression));
        }
        ArgumentNullException.ThrowIfNull(Allocator, nameof(Allocator));
    }
}
