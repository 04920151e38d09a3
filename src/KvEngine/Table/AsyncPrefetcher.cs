namespace KvEngine.Table;

/// <summary>
/// The asynchronous half of an iterator's readahead (<see cref="ReadOptions.AsyncIO"/>, RocksDB's
/// async_io for iterators): two <see cref="PrefetchSlot"/>s used in turn. Once the automatic
/// readahead reads ahead (<see cref="Readahead"/>), each block served from a buffer (the
/// readahead's own or a slot) makes sure the range right after that buffer is being read: if no
/// slot begins there, the free slot starts reading it, the readahead size growing as RocksDB's
/// does (8 KiB doubling to 256 KiB). While the cursor walks one buffer the next one fills; a block
/// the cursor reaches in a slot still in flight is waited for, never read a second time.
/// <para>
/// Memory: two buffers of at most the readahead maximum (plus alignment) per table iterator.
/// A block that straddles two buffers is joined in a scratch array of the prefetcher's.
/// Not thread-safe (one iterator's); <see cref="Reset"/> cancels reads in flight and leaves
/// their buffers to them (see <see cref="PrefetchSlot.Release"/>), so the iterator may go back to
/// its pool at once.
/// </para>
/// </summary>
internal sealed class AsyncPrefetcher
{
    private PrefetchSlot _first = new();
    private PrefetchSlot _second = new();
    private byte[] _scratch = [];

    /// <summary>The bytes of <paramref name="table"/> at [<paramref name="offset"/>, +<paramref name="length"/>) from a slot (waiting for its read if needed); false when no slot has them.</summary>
    public bool TryGet(TableReader table, long offset, int length, out ReadOnlySpan<byte> bytes) =>
        _first.TryGet(table, offset, length, out bytes) || _second.TryGet(table, offset, length, out bytes);

    /// <summary>Where the completed slot holding the byte before <paramref name="blockEnd"/> ends; -1 when none holds it.</summary>
    public long EndIfHoldsEnd(TableReader table, long blockEnd) =>
        Math.Max(_first.EndIfHoldsEnd(table, blockEnd), _second.EndIfHoldsEnd(table, blockEnd));

    /// <summary>A completed slot's bytes from <paramref name="offset"/> to its end, when one holds <paramref name="offset"/>.</summary>
    public bool TryGetHead(TableReader table, long offset, out ReadOnlySpan<byte> head) =>
        _first.TryGetHead(table, offset, out head) || _second.TryGetHead(table, offset, out head);

    /// <summary>
    /// A block that starts in one buffer (its first <paramref name="head"/>.Length bytes) and ends in
    /// the slot that begins right after it (waited for if in flight): both parts copied together
    /// into the prefetcher's scratch, valid until the next call. False when no slot holds the rest.
    /// </summary>
    public bool TryJoin(TableReader table, ReadOnlySpan<byte> head, long offset, int length, out ReadOnlySpan<byte> bytes)
    {
        long tailStart = offset + head.Length;
        int tailLength = length - head.Length;
        bytes = default;
        if (!HasRangeAt(table, tailStart) ||
            !(_first.TryGet(table, tailStart, tailLength, out ReadOnlySpan<byte> tail) || _second.TryGet(table, tailStart, tailLength, out tail)))
        {
            return false;
        }
        if (_scratch.Length < length)
        {
            _scratch = new byte[Math.Max(length, 2 * _scratch.Length)];
        }
        head.CopyTo(_scratch);
        tail.CopyTo(_scratch.AsSpan(head.Length));
        bytes = _scratch.AsSpan(0, length);
        return true;
    }

    /// <summary>True when a slot holds or reads a range of <paramref name="table"/> beginning at <paramref name="start"/>.</summary>
    public bool HasRangeAt(TableReader table, long start) => _first.BeginsAt(table, start) || _second.BeginsAt(table, start);

    /// <summary>
    /// A slot that may start a new read: not in flight and holding no byte of the block at
    /// [<paramref name="offset"/>, +<paramref name="length"/>) (the buffer the cursor walks now);
    /// null when both are busy.
    /// </summary>
    public PrefetchSlot? FreeSlot(TableReader table, long offset, int length)
    {
        if (!_first.IsInFlight && !_first.Overlaps(table, offset, length))
        {
            return _first;
        }
        if (!_second.IsInFlight && !_second.Overlaps(table, offset, length))
        {
            return _second;
        }
        return null;
    }

    /// <summary>
    /// Cancels reads in flight (their slots are abandoned to them) and returns idle buffers, when
    /// the iterator is disposed or parked; usable again afterwards.
    /// </summary>
    public void Reset()
    {
        if (!_first.Release())
        {
            _first = new PrefetchSlot();
        }
        if (!_second.Release())
        {
            _second = new PrefetchSlot();
        }
    }
}
