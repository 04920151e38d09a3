namespace KvEngine.Cache;

/// <summary>
/// How the compressed secondary cache cuts a value into allocations (PR 10287): each chunk has a
/// <see cref="HeaderBytes"/> header; while bytes remain, <c>pred = header + remaining</c>; when pred
/// is below the smallest bin, at or above the largest, or within <see cref="MinBinGap"/> of the
/// next bin above it, the last chunk takes exactly pred bytes; otherwise a chunk fills the largest
/// bin at or below pred. The bins are allocator size classes, so a bin chunk wastes nothing.
/// Stateless and thread-safe.
/// </summary>
internal static class ChunkSplitter
{
    /// <summary>Per-chunk header: next chunk address (8 bytes), payload size (4), padding (4).</summary>
    public const int HeaderBytes = 16;

    /// <summary>Distance to the next bin under which a tail is allocated exactly rather than cut again.</summary>
    public const int MinBinGap = 128;

    private static readonly int[] s_bins = [128, 256, 512, 1024, 2048, 4096, 8192, 16384];

    public static ReadOnlySpan<int> Bins => s_bins;

    /// <summary>
    /// The allocation size of the next chunk for <paramref name="remaining"/> payload bytes;
    /// <paramref name="last"/> is true when it takes all of them.
    /// </summary>
    public static int NextChunkSize(int remaining, out bool last)
    {
        int pred = HeaderBytes + remaining;
        int upper = 0;
        while (upper < s_bins.Length && s_bins[upper] <= pred)
        {
            upper++;
        }
        if (upper == 0 || upper == s_bins.Length || s_bins[upper] - pred < MinBinGap)
        {
            last = true;
            return pred;
        }
        int bin = s_bins[upper - 1];
        last = bin == pred;
        return bin;
    }

    /// <summary>Most chunks a value is cut into: a bin chunk takes the largest bin at or below what remains (more than half of it), so at most 8 follow the first.</summary>
    public const int MaxChunks = 16;

    /// <summary>
    /// The chunk allocation sizes for a value of <paramref name="length"/> payload bytes into
    /// <paramref name="sizes"/> (at least <see cref="MaxChunks"/> long); returns their count. Without
    /// <paramref name="split"/>, one exact chunk.
    /// </summary>
    public static int Plan(int length, bool split, Span<int> sizes)
    {
        int count = 0;
        int remaining = length;
        while (true)
        {
            bool last = true;
            int size = split ? NextChunkSize(remaining, out last) : HeaderBytes + remaining;
            sizes[count++] = size;
            remaining -= size - HeaderBytes;
            if (last || remaining <= 0)
            {
                return count;
            }
        }
    }

    /// <summary>The split chunk allocation sizes for a value of <paramref name="length"/> payload bytes (for tests and reports).</summary>
    public static List<int> Plan(int length)
    {
        Span<int> sizes = stackalloc int[MaxChunks];
        int count = Plan(length, split: true, sizes);
        return [.. sizes[..count]];
    }
}
