using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using KvEngine.Memory;

namespace KvEngine.Memtable;

/// <summary>
/// A bump allocator over native memory, after LevelDB's util/arena.h and RocksDB's memory/arena.h.
/// <para>
/// Memory comes from the engine's <see cref="NativeAllocator"/> (so it is counted with the block
/// cache and filters) in blocks of <see cref="BlockSize"/> bytes (8-byte aligned). Inside the current block, <see cref="AllocateAligned(int, int, out uint)"/> carves from the bottom up
/// (pointer-aligned) and <see cref="Allocate"/> from the top down (unaligned), so that mixing the two
/// wastes no padding. A request larger than a quarter of a block gets a block of its own, so that
/// it neither wastes the rest of the current block nor starts a new one. Only the table of block
/// handles is managed, and it grows by doubling: no managed allocation per entry. With an
/// <see cref="ArenaBlockRecycler"/>, regular blocks come from the spares of retired arenas first
/// and go back to it at <see cref="Dispose"/> (their contents are then undefined, as a new
/// block's are: nothing in an arena relies on zeroed memory but <see cref="AllocateAlignedZeroed"/>,
/// which clears or maps what it hands out).
/// </para>
/// <para>
/// Ids: <see cref="AllocateAligned(int, int, out uint)"/> also names the memory it returns with a 32-bit
/// id, so that structures in the arena link to each other in 4 bytes instead of 8 (a memtable's skip
/// list and hash index: 8 bytes an entry). An id counts 4-byte units through a table of slots, each
/// the base address of <see cref="SlotBytes"/> bytes of one block (a larger block takes consecutive
/// slots):
/// <code>
/// id      := slot: bits 31..20, unit: bits 19..0     // address = slots[slot] + 4 * unit
/// slots   := base: pointer[SlotCount]                // slot 0 is null, so id 0 decodes to null
/// </code>
/// <see cref="At"/> decodes an id in two loads of which the table's is an L1 hit (a 64 MiB memtable
/// of 2 MiB blocks, a slot each, uses ~35 slots: 280 bytes). The ids reach <see cref="MaxIdBytes"/> (16 GiB) of blocks; once a quarter of the
/// slots are taken, regular blocks grow to a whole slot, so an arena of small blocks still reaches
/// most of that. Past it an allocation throws InvalidOperationException.
/// </para>
/// <para>
/// Invariants: every byte handed out stays valid and never moves until <see cref="Dispose"/>, which
/// frees all blocks exactly once (further calls do nothing). Nothing is freed individually. A slot
/// is written once, before any id in it is handed out, and the table never moves, so a reader that
/// got an id through a release/acquire pair decodes it without a lock.
/// </para>
/// <para>
/// Thread-safety: one allocating thread at a time (external synchronization), or any number
/// through <see cref="AllocateAlignedConcurrently"/> (never both at once). The memory it hands
/// out may be read by any thread once published. <see cref="MemoryUsage"/> and
/// <see cref="AllocatedBytes"/> may be read from any thread (volatile reads of values the allocating
/// thread writes with volatile stores). Dispose must not race with anything.
/// </para>
/// </summary>
internal sealed unsafe class Arena : IDisposable
{
    public const int DefaultBlockSize = 1 << 20;
    public const int MinBlockSize = 4 << 10;
    public const int MaxBlockSize = 1 << 30;

    /// <summary>Alignment of <see cref="AllocateAligned(int)"/>: enough for pointers and 64-bit fields.</summary>
    public const int Alignment = 8;

    /// <summary>Bytes an id unit spans: ids name 4-byte aligned addresses.</summary>
    public const int IdUnitBytes = 4;

    /// <summary>Bits of an id that count units inside its slot.</summary>
    public const int SlotShift = 20;

    /// <summary>Bytes one slot spans (4 MiB).</summary>
    public const int SlotBytes = IdUnitBytes << SlotShift;

    /// <summary>Slots in the table: every 32-bit id has one.</summary>
    public const int SlotCount = 1 << (32 - SlotShift);

    /// <summary>Bytes of blocks ids can reach: every slot but the null one.</summary>
    public const long MaxIdBytes = (long)SlotBytes * (SlotCount - 1);

    private const uint UnitMask = (1u << SlotShift) - 1;

    /// <summary>Largest request carved from a side block rather than given a block of its own (see the header).</summary>
    public const int SideMaxRequest = SlotBytes;

    /// <summary>Bytes of a side block: four slots.</summary>
    public const int SideBlockBytes = 4 * SlotBytes;

    // A full memtable at the engine's block size (write buffer / 8) plus oversized entries fits
    // without growing; past that the table doubles (amortized, never per entry).
    private const int InitialBlockTableCapacity = 32;

    private readonly int _blockSize;

    // Free region of the current block: [_alignedPtr, _unalignedPtr).
    private byte* _alignedPtr;
    private byte* _unalignedPtr;

    private readonly NativeAllocator _allocator;

    // Serializes AllocateAlignedConcurrently callers.
    private readonly Lock _concurrentLock = new();

    // Every block ever allocated (so they can be freed); null once disposed. A block's bit in
    // _recyclable (by index) says it is a regular block the recycler may take back.
    private NativeBuffer[]? _blocks;
    private ulong[] _recyclable;
    private int _blockCount;

    // Where regular blocks come from first and go back to (null: the allocator alone).
    private readonly ArenaBlockRecycler? _recycler;

    // Sum of the blocks' usable sizes (the slot table not included); grows only.
    private long _allocatedBytes;

    // _allocatedBytes less the free regions of the current block and the side block; grows only.
    private long _memoryUsage;

    // Regular blocks after the first are mapped as huge pages (see NativeAllocator.Allocate).
    private readonly bool _hugePages;

    // Regular (_blockSize) blocks allocated so far.
    private int _regularBlocks;

    // Slot table (SlotCount bases, slot 0 null; see the header), its owner, and slots taken so far.
    private readonly byte** _slots;
    private NativeBuffer _slotTable;
    private int _slotsUsed = 1;

    // The current block's base and the id of its first byte: ids of what it hands out.
    private byte* _currentBase;
    private uint _currentFirstId;

    // The side block (requests over a quarter block, up to SideMaxRequest): bounds, free region
    // [_sidePtr, _sideEnd), id of its first byte. Null until the first such request.
    private byte* _sideBase;
    private byte* _sidePtr;
    private byte* _sideEnd;
    private uint _sideFirstId;

    /// <param name="blockSize">Bytes per block.</param>
    /// <param name="allocator">Where blocks come from (the shared allocator by default).</param>
    /// <param name="hugePages">
    /// Back regular blocks after the first with transparent huge pages. An arena fills each block
    /// from both ends before the next, so at most its current block is resident but not yet used;
    /// the first block (half a block then) and blocks of their own (a hash index's buckets, which
    /// are touched at random and only as keys arrive; large values) keep small pages, so an idle
    /// memtable, or one of a family that is rarely written, stays as small in memory as without.
    /// </param>
    /// <param name="recycler">
    /// Spare blocks of retired arenas (<see cref="ArenaBlockRecycler"/>): when its block size and
    /// page kind are this arena's, regular blocks are taken from it first and given back to it at
    /// <see cref="Dispose"/>, and this arena becomes its consumer.
    /// </param>
    public Arena(int blockSize = DefaultBlockSize, NativeAllocator? allocator = null, bool hugePages = false, ArenaBlockRecycler? recycler = null)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(blockSize, MinBlockSize);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(blockSize, MaxBlockSize);
        _blockSize = (blockSize + Alignment - 1) & ~(Alignment - 1);
        _allocator = allocator ?? NativeAllocator.Shared;
        _hugePages = hugePages;
        _blocks = new NativeBuffer[InitialBlockTableCapacity];
        _recyclable = new ulong[InitialBlockTableCapacity / 64 + 1];
        // Not zeroed: only slots already taken are ever read (and slot 0, set here). Unused slots
        // stay untouched pages: a small arena's table costs one page.
        _slotTable = _allocator.Allocate(SlotCount * sizeof(nint), zeroed: false, NativeUse.Memtable);
        _slots = (byte**)_slotTable.Pointer;
        _slots[0] = null;
        if (recycler != null && recycler.BlockSize == _blockSize && recycler.HugePages == hugePages)
        {
            _recycler = recycler;
            recycler.SetConsumer(this);
        }
    }

    /// <summary>Slots taken so far, the null slot 0 included (tests and diagnostics).</summary>
    public int SlotsUsed => Volatile.Read(ref _slotsUsed);

    /// <summary>
    /// True once half of the slots are taken: the owner should stop adding (a memtable counts as
    /// full), since the other half is what one more large request mix may need. Any thread.
    /// </summary>
    public bool IdsMostlyUsed => Volatile.Read(ref _slotsUsed) > SlotCount / 2;

    /// <summary>The slot table, for <see cref="At(byte**, uint)"/>: fixed for the arena's life.</summary>
    public byte** Slots => _slots;

    /// <summary>The address of <paramref name="id"/> (from <see cref="AllocateAligned(int, int, out uint)"/>, plus units); null for id 0.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static byte* At(byte** slots, uint id) => slots[id >> SlotShift] + ((nuint)(id & UnitMask) * IdUnitBytes);

    public int BlockSize => _blockSize;

    /// <summary>Bytes taken from the native allocator: every block at its usable size.</summary>
    public long AllocatedBytes => Volatile.Read(ref _allocatedBytes);

    /// <summary>
    /// <see cref="AllocatedBytes"/> less the still-unused tails of the current block and the side
    /// block: the bytes handed out plus alignment padding and abandoned block tails. Never decreases.
    /// </summary>
    public long MemoryUsage => Volatile.Read(ref _memoryUsage);

    public bool IsDisposed => _blocks == null;

    /// <summary>
    /// Bytes still free in the current block (RocksDB's Arena::AllocatedAndUnused). Read by the
    /// allocating thread, or by another as an estimate (the two ends move under it).
    /// </summary>
    public long CurrentBlockFree => _unalignedPtr - _alignedPtr;

    /// <summary>Returns <paramref name="size"/> bytes with no alignment guarantee.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public byte* Allocate(int size)
    {
        if (size > 0 && size <= _unalignedPtr - _alignedPtr)
        {
            _unalignedPtr -= size;
            Volatile.Write(ref _memoryUsage, _memoryUsage + size);
            return _unalignedPtr;
        }
        return AllocateFallback(size, aligned: false, out _);
    }

    /// <summary>Returns <paramref name="size"/> bytes starting at an 8-byte aligned address.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public byte* AllocateAligned(int size) => AllocateAligned(size, Alignment, out _);

    /// <summary>
    /// <paramref name="size"/> bytes aligned to <paramref name="alignment"/> (4 or 8), named:
    /// <paramref name="id"/> decodes
    /// (<see cref="At"/>) to the returned address; the id of a 4-byte aligned address k bytes
    /// further in is id + k / 4.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public byte* AllocateAligned(int size, int alignment, out uint id)
    {
        Debug.Assert(alignment is >= IdUnitBytes and <= Alignment && int.IsPow2(alignment));
        nint padding = -(nint)_alignedPtr & (alignment - 1);
        if (size > 0 && size + padding <= _unalignedPtr - _alignedPtr)
        {
            byte* result = _alignedPtr + padding;
            _alignedPtr = result + size;
            Volatile.Write(ref _memoryUsage, _memoryUsage + padding + size);
            id = _currentFirstId + (uint)((nuint)(result - _currentBase) / IdUnitBytes);
            return result;
        }
        return AllocateFallback(size, aligned: true, out id);
    }

    /// <summary>
    /// <see cref="AllocateAligned(int)"/> of zeroed bytes. A request that gets a block of its own takes
    /// a new mapping as it comes (zero, and resident only where it is touched later), so a large
    /// table that is filled sparsely costs only the pages it uses.
    /// </summary>
    public byte* AllocateAlignedZeroed(int size)
    {
        ObjectDisposedException.ThrowIf(_blocks == null, this);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(size);
        if (size > _blockSize / 4)
        {
            return AllocateOwnBlock(size, zeroed: true, out _);
        }
        byte* p = AllocateAligned(size);
        NativeMemory.Clear(p, (nuint)size);
        return p;
    }

    /// <summary>
    /// <see cref="AllocateAligned(int, int, out uint)"/> for several threads at once (concurrent memtable inserts),
    /// under a lock held for a bump of a pointer. Must not overlap the unlocked calls.
    /// </summary>
    public byte* AllocateAlignedConcurrently(int size, int alignment, out uint id)
    {
        lock (_concurrentLock)
        {
            return AllocateAligned(size, alignment, out id);
        }
    }

    /// <summary>A request the current block cannot take: a new block, the side block or a block of its own; <paramref name="id"/> names the result.</summary>
    private byte* AllocateFallback(int size, bool aligned, out uint id)
    {
        ObjectDisposedException.ThrowIf(_blocks == null, this);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(size);
        if (size > _blockSize / 4)
        {
            return size <= SideMaxRequest ? AllocateSide(size, aligned, out id) : AllocateOwnBlock(size, zeroed: false, out id);
        }

        // The rest of the current block is abandoned: it counts as used from now on. With huge
        // pages the first block is half a huge page, which the kernel never backs with one (with
        // THP "always" it would back a whole, aligned one unasked): an idle memtable stays small.
        int blockSize = _hugePages && _regularBlocks == 0 ? _blockSize / 2 : _blockSize;
        if (_slotsUsed > SlotCount / 4 && blockSize < SlotBytes)
        {
            blockSize = SlotBytes; // small blocks would run out of ids: see the header
        }
        long abandoned = _unalignedPtr - _alignedPtr;
        long before = _allocatedBytes;
        byte* block = NewBlock(blockSize, zeroed: false, hugePages: _hugePages && _regularBlocks > 0, out uint firstId,
            recyclable: blockSize == _blockSize && (!_hugePages || _regularBlocks > 0));
        long rounding = _allocatedBytes - before - blockSize; // a usable size beyond the block: never handed out
        _regularBlocks++;
        _currentBase = block;
        _currentFirstId = firstId;
        _alignedPtr = block;
        _unalignedPtr = block + blockSize;
        byte* result;
        if (aligned)
        {
            result = _alignedPtr;
            _alignedPtr += size;
        }
        else
        {
            _unalignedPtr -= size;
            result = _unalignedPtr;
        }
        Volatile.Write(ref _memoryUsage, _memoryUsage + abandoned + rounding + size);
        id = firstId + (uint)((nuint)(result - block) / IdUnitBytes);
        return result;
    }

    /// <summary>
    /// A request over a quarter block, up to <see cref="SideMaxRequest"/>: carved from the side
    /// block (8-byte aligned when <paramref name="aligned"/>), or from a new one when it does not
    /// fit, the rest of the old one then counting as used.
    /// </summary>
    private byte* AllocateSide(int size, bool aligned, out uint id)
    {
        nint padding = aligned ? -(nint)_sidePtr & (Alignment - 1) : 0;
        if (_sideBase == null || size + padding > _sideEnd - _sidePtr)
        {
            long abandoned = _sideEnd - _sidePtr;
            long before = _allocatedBytes;
            byte* block = NewBlock(SideBlockBytes, zeroed: false, hugePages: false, out uint firstId);
            _sideBase = block;
            _sidePtr = block;
            _sideEnd = block + SideBlockBytes;
            _sideFirstId = firstId;
            padding = 0;
            // The new block is charged as it is carved (as the current block); its usable size's rounding at once.
            Volatile.Write(ref _memoryUsage, _memoryUsage + abandoned + (_allocatedBytes - before - SideBlockBytes));
        }
        byte* result = _sidePtr + padding;
        _sidePtr = result + size;
        Volatile.Write(ref _memoryUsage, _memoryUsage + padding + size);
        id = _sideFirstId + (uint)((nuint)(result - _sideBase) / IdUnitBytes);
        return result;
    }

    /// <summary>A block of its own for one request: the current block keeps its free region for later small requests.</summary>
    private byte* AllocateOwnBlock(int size, bool zeroed, out uint id)
    {
        long before = _allocatedBytes;
        byte* own = NewBlock(size, zeroed, hugePages: false, out id);
        Volatile.Write(ref _memoryUsage, _memoryUsage + (_allocatedBytes - before));
        return own;
    }

    private byte* NewBlock(int size, bool zeroed, bool hugePages, out uint firstId, bool recyclable = false)
    {
        NativeBuffer[] blocks = _blocks!;
        if (_blockCount == blocks.Length)
        {
            Array.Resize(ref blocks, blocks.Length * 2);
            _blocks = blocks;
            Array.Resize(ref _recyclable, blocks.Length / 64 + 1);
        }
        int slots = (int)(((long)size + SlotBytes - 1) / SlotBytes);
        if (slots > SlotCount - _slotsUsed)
        {
            throw new InvalidOperationException(
                $"The arena's ids are used up: {_slotsUsed - 1} of {SlotCount - 1} slots of {SlotBytes >> 20} MiB taken; a block of {size} bytes needs {slots} more.");
        }
        recyclable &= _recycler != null && !zeroed;
        NativeBuffer block;
        if (!recyclable || !_recycler!.TryTake(out block))
        {
            block = _allocator.Allocate(size, zeroed, NativeUse.Memtable, hugePages);
        }
        if (recyclable)
        {
            _recyclable[_blockCount >> 6] |= 1UL << _blockCount;
        }
        blocks[_blockCount++] = block;
        int first = _slotsUsed;
        firstId = (uint)first << SlotShift;
        for (int i = 0; i < slots; i++)
        {
            _slots[first + i] = block.Pointer + ((nint)i * SlotBytes);
        }
        Volatile.Write(ref _slotsUsed, first + slots);
        // Charged at usable size: what the allocator really set aside for this block.
        Volatile.Write(ref _allocatedBytes, _allocatedBytes + block.UsableSize);
        return block.Pointer;
    }

    /// <summary>
    /// Frees every block (regular ones through the recycler, which may keep them for the next
    /// arena). Idempotent; must not race with any other use of the arena.
    /// </summary>
    public void Dispose()
    {
        NativeBuffer[]? blocks = _blocks;
        if (blocks == null)
        {
            return;
        }
        _blocks = null; // IsDisposed: the recycler keeps nothing for this arena from now on
        for (int i = 0; i < _blockCount; i++)
        {
            if ((_recyclable[i >> 6] & (1UL << i)) != 0)
            {
                _recycler!.Return(blocks[i], this);
            }
            else
            {
                blocks[i].Dispose();
            }
        }
        _blockCount = 0;
        _alignedPtr = null;
        _unalignedPtr = null;
        _currentBase = null;
        _sideBase = null;
        _sidePtr = null;
        _sideEnd = null;
        _slotTable.Dispose();
    }
}
