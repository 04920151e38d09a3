namespace KvEngine.Table;

/// <summary>
/// How the table iterators of one iterator tree read data blocks beyond the synchronous default
/// (a null <see cref="IteratorReads"/>): <see cref="Prefetch"/> reads the next ranges ahead
/// asynchronously (<see cref="ReadOptions.AsyncIO"/>, see <see cref="AsyncPrefetcher"/>);
/// <see cref="Scan"/> defers every data block read to an asynchronous scan (see
/// <see cref="ScanBlockFetcher"/>). Immutable; a tree built with one instance is reused (a spare
/// iterator) only for the same instance.
/// </summary>
internal sealed class IteratorReads
{
    /// <summary>Asynchronous prefetch, no scan: shared by every <see cref="ReadOptions.AsyncIO"/> iterator.</summary>
    public static readonly IteratorReads AsyncPrefetch = new(prefetch: true, scan: null);

    public IteratorReads(bool prefetch, ScanBlockFetcher? scan)
    {
        Prefetch = prefetch;
        Scan = scan;
    }

    /// <summary>Read the range after each readahead buffer asynchronously.</summary>
    public bool Prefetch { get; }

    /// <summary>The scan that fetches data blocks (no synchronous data block read), or null.</summary>
    public ScanBlockFetcher? Scan { get; }

    /// <summary>The reads <paramref name="options"/> ask for: null (synchronous) or <see cref="AsyncPrefetch"/>.</summary>
    public static IteratorReads? For(ReadOptions options) => options.AsyncIO ? AsyncPrefetch : null;
}
