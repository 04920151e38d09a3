using KvEngine.Cache;
using KvEngine.Storage;

namespace KvEngine.Table;

/// <summary>
/// The asynchronous side of <see cref="TableReader"/>'s iterator reads: the readahead's prefetch of
/// the next range (<see cref="AsyncPrefetcher"/>, <see cref="ReadOptions.AsyncIO"/>) and the data
/// blocks a <see cref="ScanBlockFetcher"/> (KvDb.ScanAsync) reads with awaits instead of blocking.
/// Thread-safe as the rest of the reader: each iterator's prefetcher and each scan's fetcher have one owner.
/// </summary>
internal sealed partial class TableReader
{
    /// <summary>The table file's length in bytes.</summary>
    internal long FileLength => (long)_fileSize;

    /// <summary>The direct-I/O alignment reads of the file keep (1: buffered).</summary>
    internal int ReadAlignment => _alignment;

    /// <summary>Takes a use of the open file for a read in flight (the limiter does not close it until <see cref="ReleaseFileForPrefetch"/>).</summary>
    internal IRandomAccessFile AcquireFileForPrefetch() => AcquireFile();

    /// <summary>Ends a use taken by <see cref="AcquireFileForPrefetch"/>: the read in flight has completed.</summary>
    internal void ReleaseFileForPrefetch() => ReleaseFile();

    /// <summary>
    /// A block that begins in the readahead buffer or a completed slot and ends in the slot read
    /// right after it (blocks do not stop at buffer bounds): joined by the prefetcher, the rest waited for if in flight.
    /// </summary>
    private bool TryJoinPrefetched(scoped ref Readahead readahead, long offset, int total, out ReadOnlySpan<byte> raw)
    {
        raw = default;
        if (readahead.Prefetcher is not { } prefetcher)
        {
            return false;
        }
        if (!readahead.TryGetHead(offset, out ReadOnlySpan<byte> head) && !prefetcher.TryGetHead(this, offset, out head))
        {
            return false;
        }
        return head.Length < total && prefetcher.TryJoin(this, head, offset, total, out raw);
    }

    /// <summary>
    /// After a block at [<paramref name="offset"/>, +<paramref name="total"/>) was served from a
    /// readahead buffer or a prefetched range: makes sure the range right after that buffer is read
    /// asynchronously (a free slot starts it), at the readahead's next size, aligned for direct I/O.
    /// Nothing when the iterator has no prefetcher or the block was read alone.
    /// </summary>
    private void PrefetchAhead(ref Readahead readahead, long offset, int total)
    {
        if (readahead.Prefetcher is not { } prefetcher)
        {
            return;
        }
        long end = Math.Max(readahead.EndIfHoldsEnd(offset + total), prefetcher.EndIfHoldsEnd(this, offset + total));
        if (end < 0 || end >= (long)_fileSize - TableFormat.FooterSize || prefetcher.HasRangeAt(this, end))
        {
            return;
        }
        if (prefetcher.FreeSlot(this, offset, total) is not { } slot)
        {
            return;
        }
        long stop = Math.Min(end + readahead.Grow(), (long)_fileSize);
        if (_alignment > 1)
        {
            stop = DirectIO.AlignUp(stop); // end is aligned: a buffer's end is, short of the end of the file
        }
        slot.Begin(this, AcquireFile(), end, (int)(stop - end));
    }

    /// <summary>
    /// Reads [<paramref name="offset"/>, +<paramref name="length"/>) of the file into
    /// <paramref name="buffer"/> without blocking (widened to aligned bounds for direct I/O; the
    /// buffer holds the widened range); completes with the range's start and the count read.
    /// </summary>
    internal async ValueTask<(long Start, int Read)> ReadRangeAsync(long offset, int length, byte[] buffer, CancellationToken cancellationToken)
    {
        long start = offset;
        long stop = Math.Min(offset + length, (long)_fileSize);
        if (_alignment > 1)
        {
            start = DirectIO.AlignDown(start);
            stop = DirectIO.AlignUp(stop);
        }
        IRandomAccessFile file = AcquireFile();
        try
        {
            int read = await file.ReadAsync(start, buffer.AsMemory(0, (int)(stop - start)), cancellationToken).ConfigureAwait(false);
            return (start, read);
        }
        finally
        {
            ReleaseFile();
        }
    }

    /// <summary>
    /// The data block at <paramref name="handle"/> without a synchronous read: from the block cache,
    /// or decoded from a range <paramref name="scan"/> fetched (then inserted into the cache with
    /// <paramref name="fillCache"/>, as a read would be). False when neither has it: the block is
    /// recorded as the scan's pending read (<see cref="ScanBlockFetcher.Defer"/>).
    /// </summary>
    internal bool TryLeaseDataBlockWithoutRead(BlockHandle handle, bool verifyChecksum, bool fillCache, ScanBlockFetcher scan, out BlockLease lease)
    {
        LruCache? cache = _options.BlockCache;
        var key = new CacheKey(_cacheId, handle.Offset);
        if (cache != null && cache.Lookup(key, this, CachePriority.Low, _options.Statistics, out _) is LruHandle hit)
        {
            Block.PrefetchRestartIntervals(hit);
            RecordHit(CacheEntryRole.Data);
            lease = BlockLease.Cached(hit, cache, FileName, "data");
            return true;
        }
        CheckBlockBounds(handle, "data");
        int total = (int)handle.Size + TableFormat.BlockTrailerSize;
        if (!scan.TryGet(this, (long)handle.Offset, total, out ReadOnlySpan<byte> raw))
        {
            scan.Defer(this, handle);
            lease = default;
            return false;
        }
        Block block = DecodeRawDataBlock(raw, handle, verifyChecksum);
        if (cache == null)
        {
            lease = new BlockLease(block, null, null);
            return true;
        }
        RecordMiss(CacheEntryRole.Data);
        lease = LeaseDataBlockRead(cache, key, block, fillCache);
        return true;
    }
}
