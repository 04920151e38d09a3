namespace KvEngine.Memory;

/// <summary>
/// A snapshot of a <see cref="NativeAllocator"/>'s counters. <see cref="RequestedBytes"/> sums the
/// lengths asked for, <see cref="AllocatedBytes"/> their usable (size-class) sizes, and
/// <see cref="ResidentBytes"/> the slab and large-allocation bytes obtained from the operating system.
/// </summary>
internal readonly record struct MemoryUsage(long RequestedBytes, long AllocatedBytes, long ResidentBytes, long LiveAllocations)
{
    /// <summary>Bytes lost to rounding requests up to size classes, as a fraction of the requested bytes.</summary>
    public double InternalFragmentation => RequestedBytes == 0 ? 0 : (double)(AllocatedBytes - RequestedBytes) / RequestedBytes;
}
