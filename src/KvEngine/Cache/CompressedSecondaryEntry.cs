using System.Buffers.Binary;
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
/// state; any use after Free is a bug.
/// </summary>
internal sealed unsafe class CompressedSecondaryEntry : CacheValue
{
    /// <summary>Most chunks an entry has (see <see cref="Create"/>).</summary>
    private const int MaxChunks = 16;

    private readonly NativeBuffer[] _chunks = new NativeBuffer[MaxChunks]; // [0, _count) owned
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
        NativeBuffer[] chunks = entry._chunks;
        int filled = 0;
        try
        {
            int offset = 0;
            for (; filled < count; filled++)
            {
                chunks[filled] = allocator.Allocate(sizes[filled], use: NativeUse.SecondaryCache);
            }
            for (int i = 0; i < count; i++)
            {
                byte* p = chunks[i].Pointer;
                int payload = chunks[i].Length - ChunkSplitter.HeaderBytes;
                var header = new Span<byte>(p, ChunkSplitter.HeaderBytes);
                BinaryPrimitives.WriteUInt64LittleEndian(header, i + 1 < count ? (ulong)(nint)chunks[i + 1].Pointer : 0UL);
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
                chunks[i].Dispose();
                chunks[i] = default;
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
            entry._requested += chunks[i].Length;
            entry._allocated += chunks[i].UsableSize;
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
        byte* p = _chunks[0].Pointer;
        for (int i = 0; i < _count; i++)
        {
            if (p != _chunks[i].Pointer)
            {
                return false;
            }
            var header = new ReadOnlySpan<byte>(p, ChunkSplitter.HeaderBytes);
            ulong next = BinaryPrimitives.ReadUInt64LittleEndian(header);
            int size = BinaryPrimitives.ReadInt32LittleEndian(header[8..]);
            if (size < 0 || size > _chunks[i].Length - ChunkSplitter.HeaderBytes || size > StoredLength - offset)
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
        NativeBuffer c = _chunks[chunk];
        c.Pointer[ChunkSplitter.HeaderBytes + (byteIndex % (c.Length - ChunkSplitter.HeaderBytes))] ^= 0x10;
    }

    /// <summary>The allocation sizes of the chunks (requested and usable).</summary>
    internal IEnumerable<(int Requested, int Usable)> ChunkSizes()
    {
        for (int i = 0; i < _count; i++)
        {
            yield return (_chunks[i].Length, _chunks[i].UsableSize);
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
            _chunks[i].Dispose();
            _chunks[i] = default;
        }
        ThreadLocalPool<CompressedSecondaryEntry>.Return(this);
    }
}
