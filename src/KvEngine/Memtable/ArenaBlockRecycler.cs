using System.Runtime.InteropServices;
using KvEngine.Memory;

namespace KvEngine.Memtable;

/// <summary>
/// A column family's spare memtable blocks: the regular blocks (<see cref="BlockSize"/> bytes) of
/// its retired memtables, handed to the memtable that fills now instead of new mappings, so that
/// its writers take no page faults and the kernel zeroes no pages (a fresh 2 MiB huge page is
/// zeroed on its first touch: 4% of the CPU of a Zstd fill on two cores, on the writers' threads).
/// RocksDB gets the same from malloc, which keeps freed arena blocks for the next ones.
/// <para>
/// Invariants: only blocks of <see cref="BlockSize"/> usable bytes, mapped as
/// <see cref="HugePages"/> says, are kept; a block is kept only while the spares plus the bytes
/// the consumer (the arena of the memtable filling now: the newest one registered) has allocated
/// stay within <see cref="CapacityBytes"/> (the write buffer size): the spares are what the filling
/// memtable will still take before it is full, and a background thread with no job for a second
/// frees them all once the consumer has allocated nothing since its previous look (<see
/// cref="TrimIfIdle"/>: writes stopped, and the spares would only add to what reads hold; while
/// other work keeps every background thread busy, the look waits). So the family never holds more than without them
/// (a full memtable plus the filling one while it flushes; their blocks move, none is added), and
/// an idle family holds one write buffer at most. (A capacity of two write buffers, which would
/// also keep blocks for the memtable after, reused every block but kept a whole write buffer
/// resident once writes stopped: PR 10655's row then peaked during its reads, 16 MiB higher.)
/// Every other block is freed at once. (The bound is checked against the consumer's allocated bytes,
/// which grow just after it takes a spare: a return in between may keep one block more.) A block
/// handed out is the taker's (the recycler forgets it); its contents are undefined (the
/// allocator's debug checks fill kept blocks with a poison byte, but a stale pointer into a
/// retired memtable now reads the next one's data instead of failing those checks). After
/// <see cref="Dispose"/> nothing is kept.
/// </para>
/// <para>
/// Thread-safety: any thread (a memtable is freed by whichever reader drops its last reference);
/// every member takes a short lock.
/// </para>
/// </summary>
internal sealed unsafe class ArenaBlockRecycler : IDisposable
{
    private const byte Poison = 0xDB;

    private readonly Lock _lock = new();
    private readonly Stack<NativeBuffer> _spares = new();
    private Arena? _consumer;
    private long _spareBytes;
    private long _reusedBlocks;
    private bool _disposed;
    private long _idleCheckMs = long.MinValue / 2; // when TrimIfIdle last looked (far past, without overflow)
    private Arena? _consumerAtIdleCheck; // the consumer then
    private long _consumerUsageAtIdleCheck = -1; // and its memory usage (grows with every allocation)

    /// <param name="blockSize">The regular block size of the family's arenas.</param>
    /// <param name="hugePages">Whether those blocks are mapped as huge pages.</param>
    /// <param name="capacityBytes">Spares plus the consumer's blocks stay within it (the write buffer size).</param>
    public ArenaBlockRecycler(int blockSize, bool hugePages, long capacityBytes)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(blockSize, Arena.MinBlockSize);
        ArgumentOutOfRangeException.ThrowIfNegative(capacityBytes);
        BlockSize = blockSize;
        HugePages = hugePages;
        CapacityBytes = capacityBytes;
    }

    public int BlockSize { get; }

    public bool HugePages { get; }

    public long CapacityBytes { get; }

    /// <summary>Bytes of the blocks kept now.</summary>
    public long SpareBytes
    {
        get
        {
            lock (_lock)
            {
                return _spareBytes;
            }
        }
    }

    /// <summary>Blocks kept now.</summary>
    public int SpareBlocks
    {
        get
        {
            lock (_lock)
            {
                return _spares.Count;
            }
        }
    }

    /// <summary>Blocks handed out again so far.</summary>
    public long ReusedBlocks => Interlocked.Read(ref _reusedBlocks);

    /// <summary>Makes <paramref name="arena"/> the consumer: the memtable that fills from now on (its constructor calls this).</summary>
    public void SetConsumer(Arena arena)
    {
        lock (_lock)
        {
            _consumer = arena;
        }
    }

    /// <summary>A spare block of <see cref="BlockSize"/> bytes, or false when none is kept.</summary>
    public bool TryTake(out NativeBuffer block)
    {
        lock (_lock)
        {
            if (_spares.Count == 0)
            {
                block = default;
                return false;
            }
            block = _spares.Pop();
            _spareBytes -= block.UsableSize;
            _reusedBlocks++;
            return true;
        }
    }

    /// <summary>
    /// Takes back a regular block of <paramref name="from"/> (being disposed): kept for the
    /// consumer when it fits the bound (see the header), freed otherwise.
    /// </summary>
    public void Return(NativeBuffer block, Arena from)
    {
        bool keep;
        lock (_lock)
        {
            Arena? consumer = _consumer;
            keep = !_disposed && consumer != null && consumer != from && !consumer.IsDisposed &&
                block.UsableSize == NativeAllocator.UsableSize(BlockSize) &&
                _spareBytes + block.UsableSize + consumer.AllocatedBytes <= CapacityBytes;
            if (keep)
            {
                if (block.Owner!.DebugChecks)
                {
                    NativeMemory.Fill(block.Pointer, (nuint)block.UsableSize, Poison); // no reader may rely on old contents
                }
                _spares.Push(block);
                _spareBytes += block.UsableSize;
            }
        }
        if (!keep)
        {
            block.Dispose();
        }
    }

    /// <summary>
    /// Frees every spare when the consumer is the same arena and allocated nothing (its
    /// <see cref="Arena.MemoryUsage"/>, which every allocation grows) since the previous look at
    /// least <paramref name="intervalMs"/> before <paramref name="nowMs"/>: its family stopped
    /// writing, and spares are only for a memtable that fills. Otherwise records what it saw.
    /// Returns the bytes freed. Looks closer together than the interval do nothing, so several
    /// callers may poll.
    /// </summary>
    public long TrimIfIdle(long nowMs, long intervalMs)
    {
        NativeBuffer[] freed;
        long bytes;
        lock (_lock)
        {
            if (nowMs - _idleCheckMs < intervalMs)
            {
                return 0;
            }
            Arena? consumer = _consumer;
            long usage = consumer?.MemoryUsage ?? -1;
            bool idle = ReferenceEquals(consumer, _consumerAtIdleCheck) && usage == _consumerUsageAtIdleCheck;
            _idleCheckMs = nowMs;
            _consumerAtIdleCheck = consumer;
            _consumerUsageAtIdleCheck = usage;
            if (!idle)
            {
                return 0;
            }
            bytes = _spareBytes;
            freed = TakeAllSpares();
        }
        Free(freed);
        return bytes;
    }

    /// <summary>Frees every spare; later returns are freed at once. Idempotent.</summary>
    public void Dispose()
    {
        NativeBuffer[] spares;
        lock (_lock)
        {
            _disposed = true;
            _consumer = null;
            spares = TakeAllSpares();
        }
        Free(spares);
    }

    // Holds _lock: empties the spares, for the caller to free outside the lock.
    private NativeBuffer[] TakeAllSpares()
    {
        if (_spares.Count == 0)
        {
            return [];
        }
        NativeBuffer[] all = _spares.ToArray();
        _spares.Clear();
        _spareBytes = 0;
        return all;
    }

    private static void Free(NativeBuffer[] blocks)
    {
        foreach (NativeBuffer block in blocks)
        {
            block.Dispose();
        }
    }
}
