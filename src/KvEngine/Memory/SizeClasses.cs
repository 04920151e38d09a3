using System.Numerics;

namespace KvEngine.Memory;

/// <summary>
/// The allocator's size classes, in jemalloc's pattern: 16, 32, 48, 64, then four classes per
/// doubling (80, 96, 112, 128, 160, 192, 224, 256, 320, ...). Classes up to
/// <see cref="LargestSlabClass"/> (14336) are carved from slabs; larger ones are "large"
/// allocations that keep the same four-per-doubling spacing (16384, 20480, 24576, 28672, 32768,
/// 40960, ...), as jemalloc's large classes do, rather than page rounding. Keeping jemalloc's
/// spacing for large sizes makes our usable sizes, and so our fragmentation figures, comparable
/// with RocksDB's jemalloc measurements. The usable size of a request is the smallest class that
/// holds it. Stateless and thread-safe.
/// </summary>
internal static class SizeClasses
{
    /// <summary>Spacing of the four smallest classes, and the minimum alignment of every allocation.</summary>
    public const int Quantum = 16;

    /// <summary>The largest class served from slabs.</summary>
    public const int LargestSlabClass = 14336;

    /// <summary>Number of slab classes (16 .. 14336).</summary>
    public const int SlabClassCount = 35;

    /// <summary>The largest request (and class) an allocation may have: 1.75 GiB, the largest class below 2^31.</summary>
    public const int MaxSize = 7 << 28;

    /// <summary>Number of classes, slab and large, up to <see cref="MaxSize"/>.</summary>
    public const int ClassCount = 103;

    /// <summary>Index of the smallest class that holds <paramref name="size"/> bytes (0 bytes use the smallest class).</summary>
    public static int IndexOf(long size)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(size);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(size, MaxSize);
        if (size <= 64)
        {
            return size == 0 ? 0 : (int)((size - 1) >> 4);
        }
        int lg = 63 - BitOperations.LeadingZeroCount((ulong)(size - 1));
        return (4 * (lg - 6)) + (int)((size - 1) >> (lg - 2));
    }

    /// <summary>Size in bytes of class <paramref name="index"/>.</summary>
    public static int SizeOf(int index)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(index);
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(index, ClassCount);
        if (index < 4)
        {
            return (index + 1) * Quantum;
        }
        int lg = (index / 4) + 5;
        int m = (index % 4) + 4;
        return (m + 1) << (lg - 2);
    }

    /// <summary>Usable size of a request of <paramref name="size"/> bytes: the smallest class that holds it.</summary>
    public static int UsableSize(long size) => SizeOf(IndexOf(size));

    /// <summary>True when <paramref name="size"/> is exactly a class size.</summary>
    public static bool IsClassSize(long size) => size is > 0 and <= MaxSize && SizeOf(IndexOf(size)) == size;

    /// <summary>The largest class that is a multiple of <paramref name="granule"/> (a power of two) and at most <paramref name="size"/>; 0 when none.</summary>
    public static long RoundDownToClass(long size, int granule)
    {
        if (size > MaxSize)
        {
            size = MaxSize;
        }
        if (size < Quantum)
        {
            return 0;
        }
        int i = IndexOf(size);
        if (SizeOf(i) > size)
        {
            i--;
        }
        for (; i >= 0; i--)
        {
            int c = SizeOf(i);
            if ((c & (granule - 1)) == 0)
            {
                return c;
            }
        }
        return 0;
    }

    /// <summary>The smallest class that is a multiple of <paramref name="granule"/> (a power of two) and at least <paramref name="size"/>; 0 when none fits below <see cref="MaxSize"/>.</summary>
    public static long RoundUpToClass(long size, int granule)
    {
        if (size > MaxSize)
        {
            return 0;
        }
        for (int i = IndexOf(size); i < ClassCount; i++)
        {
            int c = SizeOf(i);
            if ((c & (granule - 1)) == 0)
            {
                return c;
            }
        }
        return 0;
    }

    /// <summary>
    /// Bytes of one slab of a slab class: whole pages, whole objects (no tail waste), at least
    /// <paramref name="minSlabBytes"/>. That is a multiple of lcm(class, page), at most 7 pages past the minimum.
    /// </summary>
    public static int SlabBytes(int index, int minSlabBytes, int pageSize)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(index, SlabClassCount);
        int c = SizeOf(index);
        int unit = (int)((long)c * pageSize / Gcd(c, pageSize));
        return (int)((minSlabBytes + (long)unit - 1) / unit * unit);
    }

    private static int Gcd(int a, int b)
    {
        while (b != 0)
        {
            (a, b) = (b, a % b);
        }
        return a;
    }
}
