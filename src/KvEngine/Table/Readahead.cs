using KvEngine.Memory;
using KvEngine.Storage;

namespace KvEngine.Table;

/// <summary>
/// Automatic readahead for one table iterator (RocksDB's auto readahead in BlockBasedTableIterator,
/// with its defaults: initial_auto_readahead_size 8 KiB, max_auto_readahead_size 256 KiB,
/// num_file_reads_for_auto_readahead 2). Every data block the iterator moves to is tracked
/// (<see cref="Track"/>, cache hit or not); while each starts where the previous one ended the count
/// grows, and from the third such block on a block that must be read from the file is read with what
/// follows it, in one positional read into a buffer that serves the next blocks without a system
/// call. The readahead size doubles with each refill up to the maximum; a block that does not
/// follow the previous one (a seek elsewhere, a backward step) starts the count again.
/// A compaction's iterator reads ahead a fixed size instead (<see cref="SetFixedSize"/>: RocksDB's
/// compaction_readahead_size), from the first block it must read: each refill reads the block and
/// that many bytes after it. From a file read with direct I/O the buffer holds the aligned range
/// around what was asked for, read in place into page-aligned memory.
/// <para>
/// Invariants: the buffer holds file bytes [<c>_start</c>, <c>_start + _length</c>) of the table it
/// was filled from; <see cref="Reset"/> forgets them (a new table or a seek). Native memory with one
/// owner: the iterator, which disposes it. Not thread-safe (one iterator's).
/// </para>
/// </summary>
internal struct Readahead : IDisposable
{
    public const int InitialSize = 8 << 10;
    public const int MaxSize = 256 << 10;
    public const int ReadsBeforeReadahead = 2;

    /// <summary>Smallest buffer for a direct-I/O file: above the allocator's slab classes, so page-aligned.</summary>
    private const int AlignedMinimum = SizeClasses.LargestSlabClass + 1;

    private NativeBuffer _buffer;
    private long _start;
    private int _length;
    private long _expected; // where a sequential read would start; -1: none yet
    private int _sequentialReads;
    private int _size;
    private int _fixedSize; // compaction readahead: bytes read past each block; 0: automatic
    private AsyncPrefetcher? _prefetcher;

    /// <summary>
    /// The iterator's asynchronous prefetcher (<see cref="ReadOptions.AsyncIO"/>), or null: once the
    /// readahead reads ahead, the range after each buffer is read asynchronously while the cursor
    /// walks it. Kept across <see cref="Reset"/>; its owner disposes it.
    /// </summary>
    public AsyncPrefetcher? Prefetcher
    {
        readonly get => _prefetcher;
        set => _prefetcher = value;
    }

    /// <summary>Forgets the buffered bytes and the sequential count (keeps the buffer's memory).</summary>
    public void Reset()
    {
        _length = 0;
        _expected = -1;
        _sequentialReads = 0;
        _size = 0;
    }

    /// <summary>
    /// Reads <paramref name="bytes"/> past every block read from the file, from the first on (a
    /// compaction input's readahead); 0 restores the automatic readahead. Kept across
    /// <see cref="Reset"/>; cleared by <see cref="Dispose"/>.
    /// </summary>
    public void SetFixedSize(int bytes)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(bytes);
        _fixedSize = bytes;
    }

    /// <summary>Records that the iterator moves to the block at [<paramref name="offset"/>, +<paramref name="length"/>).</summary>
    public void Track(long offset, int length)
    {
        _sequentialReads = offset == _expected ? _sequentialReads + 1 : 0;
        _expected = offset + length;
    }

    /// <summary>The bytes [<paramref name="offset"/>, +<paramref name="length"/>) if the buffer holds them all.</summary>
    public readonly bool TryGet(long offset, int length, out ReadOnlySpan<byte> bytes)
    {
        if (_length > 0 && offset >= _start && offset + length <= _start + _length)
        {
            unsafe
            {
                bytes = new ReadOnlySpan<byte>(_buffer.Pointer + (offset - _start), length);
            }
            return true;
        }
        bytes = default;
        return false;
    }

    /// <summary>
    /// For a tracked block of <paramref name="length"/> bytes that the buffer does not hold: how many
    /// bytes to read from its start instead (more than <paramref name="length"/>, at most
    /// <paramref name="available"/>), or 0 to read just the block.
    /// </summary>
    public int Plan(int length, long available)
    {
        if (_fixedSize > 0)
        {
            long fixedWant = Math.Min((long)length + _fixedSize, available);
            return fixedWant > length ? (int)fixedWant : 0;
        }
        if (_sequentialReads < ReadsBeforeReadahead)
        {
            return 0;
        }
        Grow();
        long want = Math.Min(Math.Max(_size, length), available);
        return want > length ? (int)want : 0;
    }

    /// <summary>The next readahead size: <see cref="InitialSize"/> at first, then doubled up to <see cref="MaxSize"/>.</summary>
    public int Grow() => _size = _size == 0 ? InitialSize : Math.Min(_size * 2, MaxSize);

    /// <summary>Where the buffered bytes end when the buffer holds the byte before <paramref name="blockEnd"/>; -1 otherwise.</summary>
    public readonly long EndIfHoldsEnd(long blockEnd) =>
        _length > 0 && blockEnd > _start && blockEnd <= _start + _length ? _start + _length : -1;

    /// <summary>The buffered bytes from <paramref name="offset"/> to the buffer's end, when it holds <paramref name="offset"/>.</summary>
    public readonly bool TryGetHead(long offset, out ReadOnlySpan<byte> head)
    {
        if (_length > 0 && offset >= _start && offset < _start + _length)
        {
            unsafe
            {
                head = new ReadOnlySpan<byte>(_buffer.Pointer + (offset - _start), (int)(_start + _length - offset));
            }
            return true;
        }
        head = default;
        return false;
    }

    /// <summary>
    /// A buffer to fill from <paramref name="readOffset"/> that covers [<paramref name="offset"/>,
    /// +<paramref name="length"/>); <see cref="Filled"/> records how much was read. With an
    /// <paramref name="alignment"/> above 1 (a direct-I/O file) the range is widened to aligned
    /// bounds and the buffer is page-aligned memory (a size class above the allocator's slabs).
    /// </summary>
    public Span<byte> Prepare(long offset, int length, int alignment, out long readOffset)
    {
        _length = 0;
        long end = offset + length;
        if (alignment > 1)
        {
            offset = DirectIO.AlignDown(offset);
            end = DirectIO.AlignUp(end);
        }
        int size = (int)(end - offset);
        if (!_buffer.IsAllocated || _buffer.UsableSize < size)
        {
            _buffer.Dispose();
            _buffer = default;
            _buffer = NativeAllocator.Shared.Allocate(Math.Max(size, alignment > 1 ? AlignedMinimum : InitialSize), use: NativeUse.TableBlock);
        }
        _start = offset;
        readOffset = offset;
        return _buffer.UsableSpan[..size];
    }

    /// <summary>Records that <paramref name="read"/> bytes from the prepared offset are in the buffer.</summary>
    public void Filled(int read) => _length = read;

    /// <summary>Frees the buffer (the owner's Dispose); the struct is empty afterwards.</summary>
    public void Dispose()
    {
        _buffer.Dispose();
        _buffer = default;
        _fixedSize = 0;
        Reset();
    }
}
