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
/// owns, so damaged headers are caught rather than followed. Immutable after creation; the cache
/// frees it once.
/// </summary>
internal sealed unsafe class CompressedSecondaryEntry : CacheValue
{
    private readonly NativeBuffer[] _chunks;
    private readonly CacheEntryRole _role;
    private readonly long _requested;
    private readonly long _allocated;

    private CompressedSecondaryEntry(NativeBuffer[] chunks, CacheEntryRole role, int storedLength, int uncompressedLength, CompressionType compression, uint crc)
    {
        _chunks = chunks;
        _role = role;
        StoredLength = storedLength;
        UncompressedLength = uncompressedLength;
        Compression = compression;
        Checksum = crc;
        foreach (NativeBuffer c in chunks)
        {
            _requested += c.Length;
            _allocated += c.UsableSize;
        }
    }

    public int StoredLength { get; }

    public int UncompressedLength { get; }

    public CompressionType Compression { get; }

    public uint Checksum { get; }

    public int ChunkCount => _chunks.Length;

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
        Span<int> sizes = stackalloc int[16];
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
        var chunks = new NativeBuffer[count];
        int filled = 0;
        try
        {
            int offset = 0;
            for (; filled < count; filled++)
            {
                chunks[filled] = allocator.Allocate(sizes[filled]);
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
            }
            throw;
        }
        return new CompressedSecondaryEntry(chunks, role, stored.Length, uncompressedLength, compression, Crc32C.Compute(stored));
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
        for (int i = 0; i < _chunks.Length; i++)
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
        NativeBuffer c = _chunks[chunk];
        c.Pointer[ChunkSplitter.HeaderBytes + (byteIndex % (c.Length - ChunkSplitter.HeaderBytes))] ^= 0x10;
    }

    /// <summary>The allocation sizes of the chunks (requested and usable).</summary>
    internal IEnumerable<(int Requested, int Usable)> ChunkSizes()
    {
        foreach (NativeBuffer c in _chunks)
        {
            yield return (c.Length, c.UsableSize);
        }
    }

    public override void Free()
    {
        foreach (NativeBuffer c in _chunks)
        {
            c.Dispose();
        }
    }
}
