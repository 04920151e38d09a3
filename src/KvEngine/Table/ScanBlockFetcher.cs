using System.Buffers;

namespace KvEngine.Table;

/// <summary>
/// The data blocks of one asynchronous scan (KvDb.ScanAsync), RocksDB's block-cache-tier reads
/// turned into awaits: the scan's table iterators never read a data block synchronously; a block
/// neither cached nor fetched here is deferred (<see cref="Defer"/>: the iterator becomes invalid
/// and the scan discards its position), the scan awaits <see cref="FetchPendingAsync"/>, which
/// reads that block (and, when the scan reads a table in file order, the range after it: 8 KiB
/// doubling to 256 KiB, as the iterator readahead) on the block-read engine, and re-seeks.
/// <para>
/// Fetched ranges are kept here, not only in the block cache, so a scan progresses with no cache
/// or one too small: the last <see cref="MaxRanges"/> ranges stay until newer ones replace them.
/// A step that needs more ranges at once than that (a run of deleted keys longer than the store)
/// would never complete by fetching alone: after <see cref="MaxRanges"/> fetches without a key
/// returned, one step reads synchronously (<see cref="AllowsReads"/>), so a scan always ends.
/// Index, partition and filter blocks are read as the synchronous iterator reads them.
/// </para>
/// <para>
/// Memory: at most <see cref="MaxRanges"/> ranges of at most the readahead maximum each, rented
/// from <see cref="ArrayPool{T}.Shared"/> and returned by <see cref="Dispose"/>. Not thread-safe:
/// one scan's, used by one thread at a time (the scan's awaits hand it on).
/// </para>
/// </summary>
internal sealed class ScanBlockFetcher : IDisposable
{
    /// <summary>Ranges kept at most.</summary>
    public const int MaxRanges = 16;

    private readonly FetchedRange[] _ranges = new FetchedRange[MaxRanges];
    private int _nextRange;
    private TableReader? _pendingTable;
    private BlockHandle _pendingHandle;
    private TableReader? _lastTable; // the table and end of the last fetch (its readahead continues there)
    private long _lastEnd;
    private int _lastSize;
    private int _fetchesWithoutProgress;

    /// <summary>True when a block was deferred since the last fetch: the iterator's position is not to be trusted.</summary>
    public bool HasPending => _pendingTable != null;

    /// <summary>True during a step that may read data blocks synchronously (the progress guarantee, see the type's remarks).</summary>
    public bool AllowsReads { get; private set; }

    /// <summary>Fetches completed by the scan (each one asynchronous read of the engine).</summary>
    public long Fetches { get; private set; }

    /// <summary>Records the first block a step needed and did not find (later ones are fetched when the scan reaches them again).</summary>
    public void Defer(TableReader table, BlockHandle handle)
    {
        if (_pendingTable == null)
        {
            _pendingTable = table;
            _pendingHandle = handle;
        }
    }

    /// <summary>The bytes of <paramref name="table"/> at [<paramref name="offset"/>, +<paramref name="length"/>) from a fetched range.</summary>
    public bool TryGet(TableReader table, long offset, int length, out ReadOnlySpan<byte> bytes)
    {
        foreach (ref readonly FetchedRange r in _ranges.AsSpan())
        {
            if (ReferenceEquals(r.Table, table) && offset >= r.Start && offset + length <= r.Start + r.Length)
            {
                bytes = r.Bytes!.AsSpan((int)(offset - r.Start), length);
                return true;
            }
        }
        bytes = default;
        return false;
    }

    /// <summary>The scan returned a key (or ended): fetching made progress; the next step defers reads again.</summary>
    public void Progressed()
    {
        _fetchesWithoutProgress = 0;
        AllowsReads = false;
    }

    /// <summary>
    /// Reads the deferred block's range asynchronously and keeps it; the scan then repeats its step.
    /// Completes at once when nothing is pending. A range shorter than the block (a truncated file)
    /// raises <see cref="KvCorruptionException"/>.
    /// </summary>
    public async ValueTask FetchPendingAsync(CancellationToken cancellationToken)
    {
        if (_pendingTable is not { } table)
        {
            return;
        }
        BlockHandle handle = _pendingHandle;
        _pendingTable = null;
        long offset = (long)handle.Offset;
        int total = (int)handle.Size + TableFormat.BlockTrailerSize;
        int size = total;
        if (ReferenceEquals(table, _lastTable) && offset == _lastEnd)
        {
            _lastSize = _lastSize == 0 ? Readahead.InitialSize : Math.Min(_lastSize * 2, Readahead.MaxSize);
            size = Math.Max(total, _lastSize);
        }
        else
        {
            _lastSize = 0;
        }
        int slot = _nextRange;
        _nextRange = (_nextRange + 1) % MaxRanges;
        _ranges[slot].Release();
        int capacity = size + 2 * table.ReadAlignment;
        byte[] buffer = ArrayPool<byte>.Shared.Rent(capacity);
        (long start, int read) = (0, 0);
        try
        {
            (start, read) = await table.ReadRangeAsync(offset, size, buffer, cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            ArrayPool<byte>.Shared.Return(buffer);
            throw;
        }
        _ranges[slot] = new FetchedRange(table, start, read, buffer);
        if (offset + total > start + read)
        {
            throw new KvCorruptionException($"{table.FileName}: truncated while reading data block {handle}.");
        }
        Fetches++;
        _lastTable = table;
        _lastEnd = start + read;
        if (++_fetchesWithoutProgress > MaxRanges)
        {
            AllowsReads = true;
        }
    }

    /// <summary>Returns every range's buffer.</summary>
    public void Dispose()
    {
        foreach (ref FetchedRange r in _ranges.AsSpan())
        {
            r.Release();
        }
        _pendingTable = null;
        _lastTable = null;
    }

    /// <summary>One fetched range: <see cref="Length"/> bytes of <see cref="Table"/> at <see cref="Start"/> in <see cref="Bytes"/>.</summary>
    private struct FetchedRange(TableReader table, long start, int length, byte[] bytes)
    {
        public TableReader? Table = table;
        public long Start = start;
        public int Length = length;
        public byte[]? Bytes = bytes;

        public void Release()
        {
            if (Bytes != null)
            {
                ArrayPool<byte>.Shared.Return(Bytes);
            }
            this = default;
        }
    }
}
