namespace KvEngine.Memory;

/// <summary>Tuning of a <see cref="NativeAllocator"/>. Immutable record.</summary>
internal sealed record NativeAllocatorOptions
{
    /// <summary>Smallest slab carved into objects of one class; slabs round up to whole pages and objects.</summary>
    public int MinSlabBytes { get; init; } = 64 << 10;

    /// <summary>Alignment of slabs and large allocations (a power of two).</summary>
    public int PageSize { get; init; } = 4096;

    /// <summary>
    /// Blocks of at least this many usable bytes are mapped from the kernel and unmapped on free
    /// (<see cref="PageMemory"/>, where supported) instead of going through malloc; 0 never maps.
    /// By default every block above the slab classes (16 KiB up): glibc served the ones between
    /// 16 and 256 KiB (filters and index blocks of open tables, build buffers, readahead) from
    /// per-thread heaps that it trims only at their top, so the holes left by freed ones stayed
    /// resident (14 MB of such heaps at the peak of the Zstd seed row, 1-3 MB elsewhere).
    /// Such blocks are allocated per table or per job, not per read, so the system calls cost
    /// nothing measurable (~70 more mmap calls over a 1.2M-operation run).
    /// </summary>
    public int MapThresholdBytes { get; init; } = SizeClasses.LargestSlabClass + 1;

    /// <summary>Free-list shards per class; 0 picks the processor count rounded up to a power of two (at most 64).</summary>
    public int Shards { get; init; }

    /// <summary>
    /// Track every live allocation to catch double frees and uses after free (poisoned freed
    /// memory, checked when it is handed out again). On by default in DEBUG builds only.
    /// </summary>
    public bool DebugChecks { get; init; } = DefaultDebugChecks;

    public static NativeAllocatorOptions Default { get; } = new();

#if DEBUG
    private const bool DefaultDebugChecks = true;
#else
    private const bool DefaultDebugChecks = false;
#endif

    /// <summary>Throws <see cref="ArgumentException"/> for values the allocator cannot honour.</summary>
    public void Validate()
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(PageSize, 64, nameof(PageSize));
        if ((PageSize & (PageSize - 1)) != 0)
        {
            throw new ArgumentException("PageSize must be a power of two.", nameof(PageSize));
        }
        ArgumentOutOfRangeException.ThrowIfLessThan(MinSlabBytes, SizeClasses.LargestSlabClass, nameof(MinSlabBytes));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(MinSlabBytes, 64 << 20, nameof(MinSlabBytes));
        ArgumentOutOfRangeException.ThrowIfNegative(Shards, nameof(Shards));
        ArgumentOutOfRangeException.ThrowIfNegative(MapThresholdBytes, nameof(MapThresholdBytes));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(Shards, 1024, nameof(Shards));
    }
}
