using System.Collections.Concurrent;
using System.Runtime.InteropServices;

namespace KvEngine.Memory;

/// <summary>
/// A size-class allocator over <see cref="NativeMemory"/> (see <see cref="SizeClasses"/>).
/// <para>
/// Slab classes (16 .. 14336 bytes) are carved from page-aligned slabs of at least
/// <see cref="NativeAllocatorOptions.MinSlabBytes"/>, sized to whole pages and whole objects. Each
/// class has one bin per shard; a thread uses the shard of the processor it runs on, so threads on
/// different processors rarely meet. A bin is a short spin lock over an intrusive free list (the
/// next pointer lives in the freed block) and a bump cursor into its newest slab. A block freed on
/// another processor joins that processor's bin. Slabs are kept until <see cref="Dispose"/>, so
/// resident memory is a high-water mark. Where <see cref="PageMemory"/> is supported, slabs are
/// cut one after another from anonymous mappings of <see cref="SlabRegionBytes"/> (a page of the
/// region is resident only once a slab on it is used); through posix_memalign each page-aligned
/// slab cost glibc a chunk header and an alignment fragment, a touched page per ~64 KiB slab
/// (~6%: ~20 MB outside the allocator's count with 400 MB of cached blocks). Larger classes are mappings of their own from
/// <see cref="PageMemory"/> (from <see cref="NativeAllocatorOptions.MapThresholdBytes"/> up: by
/// default every larger class), or come from <see cref="NativeMemory.AlignedAlloc"/>
/// (page-aligned) below that threshold or where mappings are unsupported, and go back on free.
/// </para>
/// <para>
/// Counters (requested, allocated = usable, resident, live) are kept per bin under its lock and
/// summed by <see cref="GetUsage"/>, which may run concurrently with allocation (a snapshot that
/// may be mid-update by in-flight calls, exact once they finish). Usable bytes are also counted
/// per <see cref="NativeUse"/>, in one cache line of counters per shard (atomic adds on the
/// allocating and the freeing processor's line), summed by <see cref="GetLiveBytesByUse"/>. A
/// buffer carries its use in the low byte of its tag, so a free needs no lookup.
/// </para>
/// <para>
/// Debug checks (<see cref="NativeAllocatorOptions.DebugChecks"/>) register every live block with
/// a generation tag: freeing a block that is not live (double free, stale copy), or reading a
/// freed buffer's span, throws <see cref="ObjectDisposedException"/>. Freed slab blocks are
/// poisoned and verified when reused, catching writes after free.
/// </para>
/// Thread-safe. <see cref="Dispose"/> releases every slab; it must come after every allocation is freed.
/// </summary>
internal sealed unsafe class NativeAllocator : IDisposable
{
    /// <summary>Counters per shard for <see cref="NativeUse"/> values (one cache line of longs).</summary>
    public const int UseSlots = 8;

    /// <summary>Bytes of each anonymous mapping slabs are cut from.</summary>
    public const int SlabRegionBytes = 4 << 20;

    private const byte Poison = 0xDD;

    private readonly NativeAllocatorOptions _options;
    private readonly Bin[] _bins;
    private readonly int[] _slabBytes;
    private readonly int _shardMask;
    private readonly bool _debug;
    private readonly ConcurrentDictionary<nint, long>? _live;
    private readonly long[] _useBytes;
    private readonly List<nint> _slabs = []; // slabs from NativeMemory (see NewSlab); also the lock of the slab source
    private readonly List<nint> _slabRegions = []; // mappings of SlabRegionBytes that slabs are cut from
    private nint _regionCursor; // next free byte of the newest region (under the _slabs lock)
    private nint _regionEnd;
    private long _nextTag;
    private long _slabResident;
    private long _largeRequested;
    private long _largeAllocated;
    private long _largeLive;
    private volatile bool _disposed;

    public NativeAllocator()
        : this(NativeAllocatorOptions.Default)
    {
    }

    public NativeAllocator(NativeAllocatorOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        _options = options;
        int shards = options.Shards > 0 ? options.Shards : Math.Min(64, Environment.ProcessorCount);
        shards = (int)System.Numerics.BitOperations.RoundUpToPowerOf2((uint)shards);
        _shardMask = shards - 1;
        _bins = new Bin[shards * SizeClasses.SlabClassCount];
        _slabBytes = new int[SizeClasses.SlabClassCount];
        for (int i = 0; i < _slabBytes.Length; i++)
        {
            _slabBytes[i] = SizeClasses.SlabBytes(i, options.MinSlabBytes, options.PageSize);
        }
        // One line of counters per shard, plus one line of padding in front of the first.
        _useBytes = new long[(shards + 1) * UseSlots];
        _debug = options.DebugChecks;
        _live = _debug ? new ConcurrentDictionary<nint, long>() : null;
    }

    /// <summary>The process-wide allocator the engine uses by default (never disposed).</summary>
    public static NativeAllocator Shared { get; } = new();

    public NativeAllocatorOptions Options => _options;

    public bool DebugChecks => _debug;

    /// <summary>The usable size an allocation of <paramref name="length"/> bytes gets.</summary>
    public static int UsableSize(int length) => SizeClasses.UsableSize(length);

    /// <summary>
    /// Allocates <paramref name="length"/> bytes (0 .. <see cref="SizeClasses.MaxSize"/>); the
    /// buffer's usable size is the size class. With <paramref name="zeroed"/> every usable byte is 0
    /// (a new page mapping is not written to: its pages stay non-resident until first touched);
    /// otherwise the contents are undefined. <paramref name="use"/> is what the block is counted as
    /// (<see cref="GetLiveBytesByUse"/>).
    /// </summary>
    /// <remarks>
    /// With <paramref name="hugePages"/>, a block the allocator maps (see
    /// <see cref="NativeAllocatorOptions.MapThresholdBytes"/>) is aligned to huge pages and advised
    /// so (<see cref="PageMemory.MapHugePages"/>). Only for memory filled from the bottom up, since
    /// a touched huge page is resident as a whole.
    /// </remarks>
    public NativeBuffer Allocate(int length, bool zeroed = false, NativeUse use = NativeUse.Other, bool hugePages = false)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        int index = SizeClasses.IndexOf(length);
        int usable = SizeClasses.SizeOf(index);
        byte* p;
        bool fresh = false; // a new mapping: the kernel's pages are zero already
        if (index < SizeClasses.SlabClassCount)
        {
            p = AllocateSmall(index, length, usable, out bool reused);
            if (reused && _debug)
            {
                VerifyPoison(p, usable);
            }
        }
        else
        {
            fresh = IsMapped(usable);
            p = !fresh ? (byte*)NativeMemory.AlignedAlloc((nuint)usable, (nuint)_options.PageSize)
                : hugePages ? (byte*)PageMemory.MapHugePages((nuint)usable)
                : (byte*)PageMemory.Map((nuint)usable);
            Interlocked.Add(ref _largeRequested, length);
            Interlocked.Add(ref _largeAllocated, usable);
            Interlocked.Increment(ref _largeLive);
        }
        if (zeroed && !fresh) // clearing a new mapping would only make every page resident
        {
            NativeMemory.Clear(p, (nuint)usable);
        }
        Interlocked.Add(ref UseCounter(use), usable);
        // The low byte is the use; above it, with debug checks, a generation that tells allocations apart.
        long tag = (long)use;
        if (_debug)
        {
            tag |= Interlocked.Increment(ref _nextTag) << 8;
            if (!_live!.TryAdd((nint)p, tag))
            {
                throw new InvalidOperationException($"Allocator handed out live block 0x{(nint)p:x} twice.");
            }
        }
        return new NativeBuffer(this, p, length, usable, tag);
    }

    /// <summary>A large block of <paramref name="usable"/> bytes is a page mapping (decided by size alone, so Free agrees).</summary>
    private bool IsMapped(int usable) => _options.MapThresholdBytes > 0 && usable >= _options.MapThresholdBytes && PageMemory.IsSupported;

    /// <summary>Counters summed over every bin (see the type's comment).</summary>
    public MemoryUsage GetUsage()
    {
        long requested = Volatile.Read(ref _largeRequested);
        long allocated = Volatile.Read(ref _largeAllocated);
        long live = Volatile.Read(ref _largeLive);
        Bin[] bins = _bins;
        for (int i = 0; i < bins.Length; i++)
        {
            requested += Volatile.Read(ref bins[i].Requested);
            allocated += Volatile.Read(ref bins[i].Allocated);
            live += Volatile.Read(ref bins[i].Live);
        }
        long resident = Volatile.Read(ref _slabResident) + Volatile.Read(ref _largeAllocated);
        return new MemoryUsage(requested, allocated, resident, live);
    }

    /// <summary>
    /// Adds the usable bytes live per <see cref="NativeUse"/> into <paramref name="destination"/>
    /// (indexed by the enum's value, at least <see cref="UseSlots"/> long). A snapshot, like
    /// <see cref="GetUsage"/>.
    /// </summary>
    public void GetLiveBytesByUse(Span<long> destination)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(destination.Length, UseSlots, nameof(destination));
        long[] counters = _useBytes;
        for (int i = UseSlots; i < counters.Length; i++)
        {
            destination[i % UseSlots] += Volatile.Read(ref counters[i]);
        }
    }

    /// <summary>The calling processor's counter for <paramref name="use"/>.</summary>
    private ref long UseCounter(NativeUse use) =>
        ref _useBytes[(((Thread.GetCurrentProcessorId() & _shardMask) + 1) * UseSlots) + ((int)use & (UseSlots - 1))];

    /// <summary>Returns <paramref name="buffer"/>'s block (see <see cref="NativeBuffer.Dispose"/>).</summary>
    internal void Free(in NativeBuffer buffer)
    {
        if (buffer.Owner != this)
        {
            throw new ArgumentException("The buffer belongs to another allocator.", nameof(buffer));
        }
        ObjectDisposedException.ThrowIf(_disposed, this);
        byte* p = buffer.RawPointer;
        int index = SizeClasses.IndexOf(buffer.Length);
        int usable = SizeClasses.SizeOf(index);
        if (usable != buffer.UsableSize)
        {
            throw new ArgumentException("The buffer's sizes do not match any allocation.", nameof(buffer));
        }
        if (_debug)
        {
            if (!_live!.TryRemove(new KeyValuePair<nint, long>((nint)p, buffer.Tag)))
            {
                throw new ObjectDisposedException(nameof(NativeBuffer),
                    $"Double free: block 0x{(nint)p:x} of {buffer.Length} bytes is not live (freed already, or freed and handed out again).");
            }
            NativeMemory.Fill(p, (nuint)usable, Poison);
        }
        Interlocked.Add(ref UseCounter((NativeUse)(byte)buffer.Tag), -usable);
        if (index < SizeClasses.SlabClassCount)
        {
            ref Bin bin = ref BinFor(index);
            Enter(ref bin);
            *(nint*)p = bin.FreeHead;
            bin.FreeHead = (nint)p;
            bin.Requested -= buffer.Length;
            bin.Allocated -= usable;
            bin.Live--;
            Exit(ref bin);
        }
        else
        {
            if (IsMapped(usable))
            {
                PageMemory.Unmap(p, (nuint)usable);
            }
            else
            {
                NativeMemory.AlignedFree(p);
            }
            Interlocked.Add(ref _largeRequested, -buffer.Length);
            Interlocked.Add(ref _largeAllocated, -usable);
            Interlocked.Decrement(ref _largeLive);
        }
    }

    /// <summary>Throws when debug checks are on and <paramref name="buffer"/> is no longer live.</summary>
    internal void CheckLive(in NativeBuffer buffer)
    {
        if (_debug && !(_live!.TryGetValue((nint)buffer.RawPointer, out long tag) && tag == buffer.Tag))
        {
            throw new ObjectDisposedException(nameof(NativeBuffer),
                $"Use after free: block 0x{(nint)buffer.RawPointer:x} of {buffer.Length} bytes was freed.");
        }
    }

    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }
        _disposed = true;
        lock (_slabs)
        {
            foreach (nint slab in _slabs)
            {
                NativeMemory.AlignedFree((void*)slab);
            }
            _slabs.Clear();
            foreach (nint region in _slabRegions)
            {
                PageMemory.Unmap((void*)region, SlabRegionBytes);
            }
            _slabRegions.Clear();
            _regionCursor = _regionEnd = 0;
        }
        _live?.Clear();
        Interlocked.Exchange(ref _slabResident, 0);
    }

    /// <summary>
    /// A slab of <paramref name="slabBytes"/> aligned to the options' page size: cut from the newest
    /// region, or from NativeMemory without page mappings, for a slab larger than a region (a
    /// MinSlabBytes above it) or an option page size the kernel's mappings do not align to.
    /// </summary>
    private nint NewSlab(int slabBytes)
    {
        lock (_slabs)
        {
            if (!PageMemory.IsSupported || slabBytes > SlabRegionBytes || _options.PageSize > Environment.SystemPageSize)
            {
                nint own = (nint)NativeMemory.AlignedAlloc((nuint)slabBytes, (nuint)_options.PageSize);
                _slabs.Add(own);
                return own;
            }
            if (_regionEnd - _regionCursor < slabBytes)
            {
                // The rest of the old region (less than one slab) is never touched: address space only.
                nint region = (nint)PageMemory.Map(SlabRegionBytes);
                _slabRegions.Add(region);
                _regionCursor = region;
                _regionEnd = region + SlabRegionBytes;
            }
            nint slab = _regionCursor;
            _regionCursor += slabBytes;
            return slab;
        }
    }

    private ref Bin BinFor(int index) =>
        ref _bins[((Thread.GetCurrentProcessorId() & _shardMask) * SizeClasses.SlabClassCount) + index];

    private byte* AllocateSmall(int index, int length, int usable, out bool reused)
    {
        ref Bin bin = ref BinFor(index);
        Enter(ref bin);
        byte* p;
        try
        {
            if (bin.FreeHead != 0)
            {
                p = (byte*)bin.FreeHead;
                bin.FreeHead = *(nint*)p;
                reused = true;
            }
            else
            {
                if (bin.BumpCursor == bin.BumpEnd)
                {
                    int slabBytes = _slabBytes[index];
                    nint slab = NewSlab(slabBytes);
                    Interlocked.Add(ref _slabResident, slabBytes);
                    bin.BumpCursor = slab;
                    bin.BumpEnd = slab + slabBytes;
                }
                p = (byte*)bin.BumpCursor;
                bin.BumpCursor += usable;
                reused = false;
            }
            bin.Requested += length;
            bin.Allocated += usable;
            bin.Live++;
        }
        finally
        {
            Exit(ref bin);
        }
        return p;
    }

    private static void VerifyPoison(byte* p, int usable)
    {
        var tail = new ReadOnlySpan<byte>(p + sizeof(nint), usable - sizeof(nint));
        int bad = tail.IndexOfAnyExcept(Poison);
        if (bad >= 0)
        {
            throw new InvalidOperationException(
                $"Write after free: byte {bad + sizeof(nint)} of freed block 0x{(nint)p:x} ({usable} bytes) was modified.");
        }
    }

    private static void Enter(ref Bin bin)
    {
        if (Interlocked.CompareExchange(ref bin.Lock, 1, 0) != 0)
        {
            EnterContended(ref bin);
        }
    }

    private static void EnterContended(ref Bin bin)
    {
        var spin = default(SpinWait);
        do
        {
            spin.SpinOnce(sleep1Threshold: -1);
        }
        while (Volatile.Read(ref bin.Lock) != 0 || Interlocked.CompareExchange(ref bin.Lock, 1, 0) != 0);
    }

    private static void Exit(ref Bin bin) => Volatile.Write(ref bin.Lock, 0);

    /// <summary>One class's free list and slab cursor in one shard; a cache line of its own.</summary>
    [StructLayout(LayoutKind.Explicit, Size = 64)]
    private struct Bin
    {
        [FieldOffset(0)] public int Lock;
        [FieldOffset(8)] public nint FreeHead;
        [FieldOffset(16)] public nint BumpCursor;
        [FieldOffset(24)] public nint BumpEnd;
        [FieldOffset(32)] public long Requested;
        [FieldOffset(40)] public long Allocated;
        [FieldOffset(48)] public long Live;
    }
}
