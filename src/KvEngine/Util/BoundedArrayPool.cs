using System.Buffers;
using System.Runtime.CompilerServices;

namespace KvEngine.Util;

/// <summary>
/// Arrays for buffers that grow by doubling (blocks, batches, a filter's key hashes): small ones
/// come from and go back to <see cref="ArrayPool{T}.Shared"/>; ones above
/// <see cref="PooledLimitBytes"/> are allocated fresh and left to the GC. The shared pool keeps
/// every size a growing buffer passed through, and what it keeps is live to the GC: measured with
/// kvbench, the index, filter and hash buffers of table builders held ~50 MB of large-object heap
/// that way. Thread-safe.
/// </summary>
internal static class BoundedArrayPool<T>
{
    /// <summary>Largest array, in bytes, that is pooled.</summary>
    public const int PooledLimitBytes = 64 << 10;

    private static readonly int s_pooledLimit = PooledLimitBytes / Unsafe.SizeOf<T>();

    /// <summary>An array of at least <paramref name="length"/> elements.</summary>
    public static T[] Rent(int length) =>
        length > s_pooledLimit ? GC.AllocateUninitializedArray<T>(length) : ArrayPool<T>.Shared.Rent(length);

    /// <summary>Gives back an array from <see cref="Rent"/>; its contents must not be used after.</summary>
    public static void Return(T[] array)
    {
        if (array.Length > 0 && array.Length <= s_pooledLimit)
        {
            ArrayPool<T>.Shared.Return(array);
        }
    }
}
