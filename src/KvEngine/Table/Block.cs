using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics.X86;
using KvEngine.Cache;
using KvEngine.Format;
using KvEngine.Memory;
using KvEngine.Util;

namespace KvEngine.Table;

/// <summary>
/// One uncompressed block (without its trailer), parsed just enough to find its restart array;
/// entries are decoded, with bounds checks, by <see cref="BlockCursor"/>. A data block at most
/// 64 KiB may carry RocksDB's data-block hash index (top bit of the last word set):
/// <code>
/// DataBlockWithHash := entry* restart: fixed32[n] bucket: byte[num_buckets] num_buckets: fixed16 footer: fixed32
///   footer := (1 &lt;&lt; 31) | n
/// </code>
/// <see cref="HashBucket"/> exposes the hash index to <see cref="BlockCursor.SeekForGet"/>; other
/// seeks binary-search the restarts (grammar and bucket math in <see cref="DataBlockHashIndex"/>).
/// The bytes live in a managed array (metadata blocks; pooled arrays from
/// <see cref="ArrayPool{T}.Shared"/> are returned by Dispose) or in a <see cref="NativeBuffer"/>
/// (data blocks, which the block cache holds and charges at the buffer's usable size; Dispose or
/// <see cref="Free"/> frees it). After Dispose no cursor may use the block. Immutable otherwise;
/// concurrent readers are fine until Dispose.
/// <para>
/// Native blocks come from <see cref="RentNative"/> and have exactly one owner at a time (the
/// block cache entry, or the <see cref="BlockLease"/> that read it); the owner's Dispose (or the
/// cache's <see cref="Free"/>) frees the buffer and recycles the object through
/// <see cref="ThreadLocalPool{T}"/>, so a block read on a cache miss creates no managed object in
/// steady state. A second Dispose by the same owner does nothing; any use after Dispose is a bug.
/// </para>
/// <para>
/// A block cache entry can take a native block's buffer (<see cref="LruCache.TryInsertBlock"/>):
/// the block then becomes a view (<see cref="IsView"/>) of bytes the entry owns, and readers of a
/// cached block get views from <see cref="RentView"/>, pooled like native blocks. A view is valid
/// while its holder keeps the entry's handle; its Dispose frees no bytes.
/// </para>
/// </summary>
internal sealed unsafe class Block : CacheValue, IDisposable
{
    private const int MaxBlockSizeWithHashIndex = DataBlockHashIndex.MaxBlockSize;

    [ThreadStatic]
    private static Block? t_spare; // see Rent

    private string _fileName;
    private string _kind;
    private ulong _offset;
    private CacheEntryRole _role;
    private byte[] _array;
    private NativeBuffer _native;
    private byte* _pointer;
    private bool _pooled;
    private bool _recyclable; // a native block from RentNative or a view from RentView: the object goes back to the pool on Dispose
    private bool _view; // reads bytes a cache entry owns
    private StrongBox<NativeBuffer>? _restartPrefixes; // NumRestarts ulongs, or none (boxed: only a reader's own index has them, and every cached block would carry the struct's 32 bytes)

    /// <summary>Wraps <paramref name="data"/>[0..<paramref name="length"/>); throws <see cref="KvCorruptionException"/> when malformed.</summary>
    public Block(byte[] data, int length, bool pooled, bool isDataBlock, string fileName, string kind = "", ulong offset = 0)
    {
        _array = data;
        Length = length;
        _fileName = fileName;
        _kind = kind;
        _offset = offset;
        _pooled = pooled;
        _role = isDataBlock ? CacheEntryRole.Data : CacheEntryRole.Index;
        (RestartsOffset, NumRestarts) = Parse(data.AsSpan(0, length), isDataBlock);
    }

    private Block()
    {
        _array = [];
        _fileName = string.Empty;
        _kind = string.Empty;
    }

    /// <summary>
    /// A block over <paramref name="contents"/>, recycled from this thread's pool when it has one.
    /// Takes ownership of <paramref name="contents"/> (freed by Dispose, and at once when the
    /// contents are malformed: then <see cref="KvCorruptionException"/> is thrown).
    /// </summary>
    public static Block RentNative(NativeBuffer contents, CacheEntryRole role, string fileName, string kind, ulong offset)
    {
        Block block = Rent();
        block._native = contents;
        block._pointer = contents.Pointer;
        block.Length = contents.Length;
        block._fileName = fileName;
        block._kind = kind;
        block._offset = offset;
        block._role = role;
        block._recyclable = true;
        try
        {
            (block.RestartsOffset, block.NumRestarts) = block.Parse(new ReadOnlySpan<byte>(block._pointer, block.Length), role == CacheEntryRole.Data);
        }
        catch
        {
            block.Dispose();
            throw;
        }
        return block;
    }

    /// <summary>
    /// A view of the native block <paramref name="handle"/>'s entry holds (<see cref="LruHandle.IsNativeBlock"/>),
    /// recycled from this thread's pool when it has one; valid while the handle is held. Its
    /// corruption messages name <paramref name="fileName"/>, <paramref name="kind"/> and the key's offset.
    /// The restart array is found again from the block's last word (the bytes parsed when the block
    /// was read and have not changed since).
    /// </summary>
    public static Block RentView(in LruHandle handle, string fileName, string kind)
    {
        Block block = Rent();
        block._pointer = handle.BlockData;
        block.Length = handle.BlockLength;
        block._fileName = fileName;
        block._kind = kind;
        block._offset = handle.Key.Offset;
        block._role = handle.Role;
        block._recyclable = true;
        block._view = true;
        try
        {
            (block.RestartsOffset, block.NumRestarts) = block.Parse(new ReadOnlySpan<byte>(block._pointer, block.Length), block._role == CacheEntryRole.Data);
        }
        catch
        {
            block.Dispose();
            throw;
        }
        return block;
    }

    public override bool TryGetNativeBlock(NativeAllocator allocator, out NativeBuffer buffer)
    {
        if (_recyclable && !_view && _native.IsAllocated && _native.Owner == allocator && _restartPrefixes == null)
        {
            buffer = _native;
            return true;
        }
        buffer = default;
        return false;
    }

    public override void BecomeView()
    {
        if (!_recyclable || _view || !_native.IsAllocated)
        {
            throw new InvalidOperationException("Only a native block that owns its buffer can become a view.");
        }
        _native = default; // the cache entry owns it now; _pointer still reads it
        _view = true;
    }

    public override bool IsView => _view;

    /// <summary>
    /// A recycled block from this thread's spare slot, else its pool, else a new one. The slot sits
    /// in front of <see cref="ThreadLocalPool{T}"/> because a cached Get rents and returns a view
    /// every time, and a non-generic thread static is one load where the pool's shared generic
    /// code looks its thread statics up (1.7% of a seek's samples under Native AOT).
    /// </summary>
    private static Block Rent()
    {
        Block? spare = t_spare;
        if (spare != null)
        {
            t_spare = null;
            return spare;
        }
        return ThreadLocalPool<Block>.TryRent() ?? new Block();
    }

    private static void Return(Block block)
    {
        if (t_spare == null)
        {
            t_spare = block;
            return;
        }
        ThreadLocalPool<Block>.Return(block);
    }

    private (int RestartsOffset, int NumRestarts) Parse(ReadOnlySpan<byte> data, bool isDataBlock)
    {
        int length = data.Length;
        if (length < 4)
        {
            Throw(Source, $"block of {length} bytes is too short for its restart count");
        }
        uint footer = Coding.DecodeFixed32(data[(length - 4)..]);
        long restartsEnd = length - 4;
        uint restarts = footer;
        if (isDataBlock && length <= MaxBlockSizeWithHashIndex && (footer & 0x8000_0000u) != 0)
        {
            restarts = footer & 0x7FFF_FFFFu;
            if (restartsEnd < 2)
            {
                Throw(Source, "data block hash index is truncated");
            }
            int buckets = data[length - 6] | (data[length - 5] << 8);
            if (buckets == 0 || buckets + 2 > restartsEnd)
            {
                Throw(Source, $"data block hash index of {buckets} buckets does not fit the block");
            }
            restartsEnd -= 2 + buckets;
            HashBucketsOffset = (int)restartsEnd;
            HashBucketCount = buckets;
        }
        else
        {
            HashBucketsOffset = 0;
            HashBucketCount = 0;
        }
        long restartsOffset = restartsEnd - (4L * restarts);
        if (restartsOffset < 0)
        {
            Throw(Source, $"block of {length} bytes cannot hold {restarts} restart points");
        }
        if (restarts == 0 && restartsOffset != 0)
        {
            Throw(Source, "block has entries but no restart points");
        }
        return ((int)restartsOffset, (int)restarts);
    }

    /// <summary>The block's bytes (valid until Dispose).</summary>
    public override ReadOnlySpan<byte> Contents => _pointer != null ? new ReadOnlySpan<byte>(_pointer, Length) : _array.AsSpan(0, Length);

    public override CacheEntryRole Role => _role;

    /// <summary>Bytes this block owns (asked for): none for a view.</summary>
    public override long RequestedBytes => _view ? 0 : _native.IsAllocated ? _native.Length : Length;

    public override long AllocatedBytes => _view ? 0 : _native.IsAllocated ? _native.UsableSize : _array.Length;

    public override bool CanDemote => true;

    /// <summary>Bytes of block content in the block.</summary>
    public int Length { get; private set; }

    /// <summary>Offset of the restart array, which is also where the entries end.</summary>
    public int RestartsOffset { get; private set; }

    public int NumRestarts { get; private set; }

    /// <summary>Where the data-block hash index's buckets start (valid when <see cref="HashBucketCount"/> is not 0).</summary>
    public int HashBucketsOffset { get; private set; }

    /// <summary>Buckets of the block's data-block hash index; 0 when the block has none.</summary>
    public int HashBucketCount { get; private set; }

    /// <summary>The hash index's bucket for <paramref name="userKey"/>: a restart index, <see cref="DataBlockHashIndex.Collision"/> or <see cref="DataBlockHashIndex.NoEntry"/>. Needs <see cref="HashBucketCount"/> &gt; 0.</summary>
    public byte HashBucket(ReadOnlySpan<byte> userKey)
    {
        uint bucket = DataBlockHashIndex.Hash(userKey) % (uint)HashBucketCount;
        return _pointer != null ? _pointer[HashBucketsOffset + (int)bucket] : _array[HashBucketsOffset + (int)bucket];
    }

    /// <summary>
    /// For a long-lived index block (a table reader's own), the first 8 bytes of each restart
    /// key's user key, big-endian and zero-padded (<see cref="KeyPrefix"/>), which
    /// <see cref="BlockCursor.Seek"/> binary-searches instead of the entries: one dense array
    /// instead of two scattered loads per probe, held in native memory the block owns (a table's
    /// index has one per data block: kept off the GC heap, where each reader's array was a
    /// large object). Empty for other blocks. Set once, by
    /// <see cref="BlockCursor.BuildRestartPrefixes"/>, before the block is shared.
    /// </summary>
    public ReadOnlySpan<ulong> RestartPrefixes =>
        _restartPrefixes is { } prefixes ? new ReadOnlySpan<ulong>(prefixes.Value.Pointer, NumRestarts) : default;

    /// <summary>Native bytes <see cref="RestartPrefixes"/> occupy (their allocation's usable size).</summary>
    public long RestartPrefixBytes => _restartPrefixes?.Value.UsableSize ?? 0;

    /// <summary>
    /// Gives the block its restart prefixes: <see cref="NumRestarts"/> ulongs in
    /// <paramref name="prefixes"/>, which the block owns from here on (Dispose frees them). Once,
    /// before the block is shared.
    /// </summary>
    internal void SetRestartPrefixes(NativeBuffer prefixes)
    {
        if (_restartPrefixes != null || prefixes.Length < NumRestarts * sizeof(ulong))
        {
            prefixes.Dispose();
            throw new InvalidOperationException("A block's restart prefixes are set once, one per restart.");
        }
        _restartPrefixes = new StrongBox<NativeBuffer>(prefixes);
    }

    /// <summary>Names the file and block in corruption messages (formatted on demand).</summary>
    public string Source => _kind.Length == 0 ? _fileName : $"{_fileName}: {_kind} block at offset {_offset}";

    /// <summary>The offset of restart point <paramref name="index"/>; corruption when it points outside the entries.</summary>
    public int RestartPoint(int index)
    {
        uint offset = Coding.DecodeFixed32(Contents[(RestartsOffset + (4 * index))..]);
        if (offset >= (uint)RestartsOffset)
        {
            Throw(Source, $"restart point {index} at {offset} lies outside the entries");
        }
        return (int)offset;
    }

    /// <summary>Entry bytes <see cref="Prefetch"/> asks for at most (a default 4 KiB block's entries, twice over).</summary>
    private const int MaxPrefetchBytes = 8 << 10;

    /// <summary>
    /// Hints the CPU to start loading what a seek into this block reads: its restart array (into
    /// L1) and its entries, up to <see cref="MaxPrefetchBytes"/> (into L2). A batched lookup issues
    /// this for every block of a batch before seeking any, so the cache misses of different blocks
    /// overlap instead of stalling one seek after another (measured in docs/benchmarks.md,
    /// "MultiGet": the whole block beat the restart array and first line alone). No effect without
    /// x86 prefetch or on a block held in a managed array; never faults (a prefetch is a hint).
    /// </summary>
    public void Prefetch()
    {
        if (!Sse.IsSupported || _pointer == null)
        {
            return;
        }
        Sse.Prefetch0(_pointer + RestartsOffset);
        int end = Math.Min(RestartsOffset, MaxPrefetchBytes);
        for (int offset = 0; offset < end; offset += 64)
        {
            Sse.Prefetch1(_pointer + offset);
        }
    }

    /// <summary>Lines <see cref="PrefetchRestartIntervals"/> asks for at the head of each restart interval (512 bytes: about four 16 B / 100 B entries).</summary>
    private const int IntervalHeadLines = 8;

    /// <summary>
    /// Hints the CPU to load the head of every restart interval of the cached native block
    /// <paramref name="handle"/> holds (up to <see cref="MaxRestartKeyPrefetches"/> restarts; none
    /// for more, or for a block with a hash index), read straight from its restart array before the
    /// block is parsed. Called as soon as a data block's cache entry is found: the entry lives beside
    /// the block's end, so the restart array is already on its way, and the restart keys and the
    /// entries a seek scans next arrive together instead of one after the other (restart keys, then
    /// the interval the search picks). Measured in docs/benchmarks.md, "A Get from a cached block". Reads only the
    /// block's last bytes; offsets outside the entries are skipped; never faults (a prefetch is a hint).
    /// </summary>
    public static void PrefetchRestartIntervals(in LruHandle handle)
    {
        if (!Sse.IsSupported || !handle.IsNativeBlock || handle.BlockLength < 4)
        {
            return;
        }
        byte* p = handle.BlockData;
        int length = handle.BlockLength;
        uint restarts = Unsafe.ReadUnaligned<uint>(p + length - 4); // little-endian: x86 only reaches here
        long restartsOffset = length - 4 - (4L * restarts);
        if (restartsOffset >= 0) // else a hash index's flag in the count, or a count the block cannot hold
        {
            PrefetchIntervalHeads(p, restartsOffset, restarts, IntervalHeadLines);
        }
    }

    /// <summary>
    /// Requests the first <paramref name="lines"/> cache lines of each of the
    /// <paramref name="restarts"/> restart intervals of the block at <paramref name="p"/>, whose
    /// restart array starts at <paramref name="restartsOffset"/>: nothing for no restarts or more
    /// than <see cref="MaxRestartKeyPrefetches"/>; lines at or past the restart array are skipped.
    /// The caller has checked for x86 prefetch.
    /// </summary>
    private static void PrefetchIntervalHeads(byte* p, long restartsOffset, uint restarts, int lines)
    {
        if (restarts - 1 >= MaxRestartKeyPrefetches)
        {
            return;
        }
        for (int i = 0; i < (int)restarts; i++)
        {
            uint offset = Unsafe.ReadUnaligned<uint>(p + restartsOffset + (4 * i)); // little-endian: x86 only reaches here
            for (int line = 0; line < lines && offset + (64L * line) < restartsOffset; line++)
            {
                Sse.Prefetch0(p + offset + (64 * line));
            }
        }
    }

    /// <summary>Most restart keys <see cref="PrefetchRestartKeys"/> asks for (a default 4 KiB data block has 2-4).</summary>
    private const int MaxRestartKeyPrefetches = 8;

    /// <summary>
    /// Hints the CPU to load the first line of each restart key (up to
    /// <see cref="MaxRestartKeyPrefetches"/> restarts; none for more): the lines a binary search over
    /// a small block's restarts probes one after another, requested together. No effect without x86
    /// prefetch or on a block in a managed array; never faults (offsets outside the entries are skipped).
    /// </summary>
    public void PrefetchRestartKeys()
    {
        if (Sse.IsSupported && _pointer != null)
        {
            PrefetchIntervalHeads(_pointer, RestartsOffset, (uint)NumRestarts, lines: 1);
        }
    }

    /// <summary>Most bytes <see cref="PrefetchEntries"/> asks for.</summary>
    private const int MaxIntervalPrefetchBytes = 2 << 10;

    /// <summary>
    /// Hints the CPU to load entry bytes [<paramref name="from"/>, <paramref name="to"/>) (at most
    /// <see cref="MaxIntervalPrefetchBytes"/>) into L1: the restart interval a seek is about to scan
    /// entry by entry, whose every entry's first byte would otherwise be a miss the next depends on.
    /// No effect without x86 prefetch or on a block in a managed array; never faults.
    /// </summary>
    public void PrefetchEntries(int from, int to)
    {
        if (!Sse.IsSupported || _pointer == null)
        {
            return;
        }
        int end = Math.Min(Math.Min(to, RestartsOffset), from + MaxIntervalPrefetchBytes);
        for (int offset = from & ~63; offset < end; offset += 64)
        {
            Sse.Prefetch0(_pointer + offset);
        }
    }

    public override void Free() => Dispose();

    public void Dispose()
    {
        if (_restartPrefixes is { } boxed)
        {
            _restartPrefixes = null;
            boxed.Value.Dispose();
        }
        if (_pooled)
        {
            _pooled = false;
            byte[] data = _array;
            _array = [];
            ArrayPool<byte>.Shared.Return(data);
        }
        if (_native.IsAllocated)
        {
            NativeBuffer native = _native;
            _native = default;
            _pointer = null;
            native.Dispose();
        }
        if (_recyclable)
        {
            _recyclable = false;
            _view = false;
            _pointer = null;
            Length = 0;
            RestartsOffset = 0;
            NumRestarts = 0;
            HashBucketsOffset = 0;
            HashBucketCount = 0;
            Return(this);
        }
    }

    public static void Throw(string source, string what) => throw new KvCorruptionException($"{source}: {what}.");
}
