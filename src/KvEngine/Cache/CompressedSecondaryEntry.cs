using System.Buffers.Binary;
using System.Runtime.CompilerServices;
using KvEngine.Compression;
using KvEngine.Memory;
using KvEngine.Util;

namespace KvEngine.Cache;

/// <summary>
/// One value kept by the <see cref="CompressedSecondaryCache"/>: the stored bytes (compressed, or
/// raw when compression saved nothing or the value is a filter) in a chain of native chunks, each
/// <code>
/// SecondaryChunk := next: fixed64 (address of the next chunk, 0 in the last) size: fixed32 (payload bytes) reserved: fixed32 payload: byte[size]
/// </code>
/// cut by <see cref="ChunkSplitter"/> (or one exact chunk without split), with a CRC32C of the
/// stored bytes. Reading walks the chain, checking every link and size against the allocations it
/// owns, so damaged headers are caught rather than followed. Immutable from <see cref="Create"/>
/// until the cache frees it (once). <see cref="Free"/> recycles the object (with its chunk table)
/// through <see cref="ThreadLocalPool{T}"/>, so a demotion creates no managed object in steady
/// state; any use after Free is a bug. The chunk table is inline for the first
/// <see cref="InlineChunks"/> chunks (a value of up to ~4 KiB, the common block, takes 1-3) and
/// an overflow array, made once per pooled object, past them: the cache holds tens of thousands of
/// entries, so each entry's managed size is resident memory (a 16-slot array was ~540 B each).
/// </summary>
internal sealed unsafe class CompressedSecondaryEntry : CacheValue
{
    /// <summary>Most chunks an entry has (see <see cref="Create"/>).</summary>
    private const int MaxChunks = 16;

    /// <summary>Chunks kept in the object itself; more go to <see cref="_overflow"/>.</summary>
    internal const int InlineChunks = 4;

    private InlineChunkTable _inline; // chunks [0, min(_count, InlineChunks)) owned
    private NativeBuffer[]? _overflow; // chunks [InlineChunks, _count) owned, at index - InlineChunks
    private int _count;
    private CacheEntryRole _role;
    private long _requested;
    private long _allocated;

    private CompressedSecondaryEntry()
    {
    }

    public int StoredLength { get; private set; }

    public int UncompressedLength { get; private set; }

    public CompressionType Compression { get; private set; }

    public uint Checksum { get; private set; }

    public int ChunkCount => _count;

    public override CacheEntryRole Role => _role;

    public override long RequestedBytes => _requested;

    public override long AllocatedBytes => _allocated;

    public override bool CanDemote => false;

    public override ReadOnlySpan<byte> Contents => [];

    /// <summary>Copies <paramref name="stored"/> into chunks from <paramref name="allocator"/>.</summary>
    public static CompressedSecondaryEntry Create(ReadOnlySpan<byte> stored, int uncompressedLength, CompressionType compression, CacheEntryRole role, NativeAllocator allocator, bool split)
    {
        // A bin chunk takes the largest bin <= pred (more than half of it) and pred < 16384, so
        // at most 8 chunks follow the first: 16 slots always suffice.
        int count = 0;
        int remaining = stored.Length;
        Span<int> sizes = stackalloc int[MaxChunks];
        while (true)
        {
            int size;
            bool last;
            if (split)
            {
                size = ChunkSplitter.NextChunkSize(remaining, out last);
            }
            else
            {
                size = ChunkSplitter.HeaderBytes + remaining;
                last = true;
            }
            sizes[count++] = size;
            remaining -= size - ChunkSplitter.HeaderBytes;
            if (last || remaining <= 0)
            {
                break;
            }
        }
        CompressedSecondaryEntry entry = ThreadLocalPool<CompressedSecondaryEntry>.TryRent() ?? new CompressedSecondaryEntry();
        if (count > InlineChunks)
        {
            entry._overflow ??= new NativeBuffer[MaxChunks - InlineChunks];
        }
        int filled = 0;
        try
        {
            int offset = 0;
            for (; filled < count; filled++)
            {
                entry.Chunk(filled) = allocator.Allocate(sizes[filled], use: NativeUse.SecondaryCache);
            }
            for (int i = 0; i < count; i++)
            {
                ref NativeBuffer chunk = ref entry.Chunk(i);
                byte* p = chunk.Pointer;
                int payload = chunk.Length - ChunkSplitter.HeaderBytes;
                var header = new Span<byte>(p, ChunkSplitter.HeaderBytes);
                BinaryPrimitives.WriteUInt64LittleEndian(header, i + 1 < count ? (ulong)(nint)entry.Chunk(i + 1).Pointer : 0UL);
                BinaryPrimitives.WriteInt32LittleEndian(header[8..], payload);
                BinaryPrimitives.WriteInt32LittleEndian(header[12..], 0);
                stored.Slice(offset, payload).CopyTo(new Span<byte>(p + ChunkSplitter.HeaderBytes, payload));
                offset += payload;
            }
        }
        catch
        {
            for (int i = 0; i < filled; i++)
            {
                entry.Chunk(i).Dispose();
                entry.Chunk(i) = default;
            }
            ThreadLocalPool<CompressedSecondaryEntry>.Return(entry);
            throw;
        }
        entry._count = count;
        entry._role = role;
        entry.StoredLength = stored.Length;
        entry.UncompressedLength = uncompressedLength;
        entry.Compression = compression;
        entry.Checksum = Crc32C.Compute(stored);
        entry._requested = 0;
        entry._allocated = 0;
        for (int i = 0; i < count; i++)
        {
            ref NativeBuffer chunk = ref entry.Chunk(i);
            entry._requested += chunk.Length;
            entry._allocated += chunk.UsableSize;
        }
        return entry;
    }

    /// <summary>Merges the chunks into <paramref name="destination"/> (<see cref="StoredLength"/> bytes); false when a header or the checksum is wrong.</summary>
    public bool TryMerge(Span<byte> destination)
    {
        if (destination.Length != StoredLength)
        {
            return false;
        }
        int offset = 0;
        byte* p = Chunk(0).Pointer;
        for (int i = 0; i < _count; i++)
        {
            ref NativeBuffer chunk = ref Chunk(i);
            if (p != chunk.Pointer)
            {
                return false;
            }
            var header = new ReadOnlySpan<byte>(p, ChunkSplitter.HeaderBytes);
            ulong next = BinaryPrimitives.ReadUInt64LittleEndian(header);
            int size = BinaryPrimitives.ReadInt32LittleEndian(header[8..]);
            if (size < 0 || size > chunk.Length - ChunkSplitter.HeaderBytes || size > StoredLength - offset)
            {
                return false;
            }
            new ReadOnlySpan<byte>(p + ChunkSplitter.HeaderBytes, size).CopyTo(destination[offset..]);
            offset += size;
            p = (byte*)(nint)next;
        }
        return p == null && offset == StoredLength && Crc32C.Compute(destination) == Checksum;
    }

    /// <summary>Flips one payload bit of chunk <paramref name="chunk"/> (fault injection for tests).</summary>
    internal void CorruptPayloadForTesting(int chunk, int byteIndex)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(chunk, _count);
        NativeBuffer c = Chunk(chunk);
        c.Pointer[ChunkSplitter.HeaderBytes + (byteIndex % (c.Length - ChunkSplitter.HeaderBytes))] ^= 0x10;
    }

    /// <summary>The allocation sizes of the chunks (requested and usable).</summary>
    internal IEnumerable<(int Requested, int Usable)> ChunkSizes()
    {
        for (int i = 0; i < _count; i++)
        {
            NativeBuffer chunk = Chunk(i);
            yield return (chunk.Length, chunk.UsableSize);
        }
    }

    public override void Free()
    {
        int count = _count;
        if (count == 0)
        {
            return;
        }
        _count = 0;
        for (int i = 0; i < count; i++)
        {
            ref NativeBuffer chunk = ref Chunk(i);
            chunk.Dispose();
            chunk = default;
        }
        ThreadLocalPool<CompressedSecondaryEntry>.Return(this);
    }

    /// <summary>Chunk <paramref name="i"/>'s slot (the overflow array exists whenever i needs it).</summary>
    private ref NativeBuffer Chunk(int i) =>
        ref i < InlineChunks ? ref _inline[i] : ref _overflow![i - InlineChunks];

    /// <summary>The first <see cref="InlineChunks"/> chunk slots, inside the entry object.</summary>
    [InlineArray(InlineChunks)]
    private struct InlineChunkTable
    {
        private NativeBuffer _first;
    }
}
