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
/// cut by <see cref="ChunkSplitter"/> (or one exact chunk without split), owned by a native record
/// the cache entry holds (no managed object per entry):
/// <code>
/// SecondaryRecord := requested: i32 allocated: i32   // the chunks' bytes asked for and usable (LruCache reads these two first)
///                    checksum: u32 (CRC32C of the stored bytes) stored_length: i32 uncompressed_length: i32
///                    compression: u8 role: u8 count: u8 split: u8 chunk: ptr[count]
///                    [tag: i64[count + 1]]              // the chunks' and the record's allocator tags, only with debug checks
/// </code>
/// The record is the trusted account of the allocations: the chunk sizes follow from the stored
/// length and the split flag (<see cref="ChunkSplitter.Plan(int, bool, Span{int})"/>), and reading walks the chain checking every
/// link and size against it, so damaged chunk headers are caught rather than followed. Immutable
/// from <see cref="Create"/> until <see cref="Free"/> (once, by the cache); any use after that is a
/// bug. A 16-byte value: copies refer to the same record.
/// </summary>
internal readonly unsafe struct CompressedSecondaryEntry
{
    private const int ChunksOffset = 24;

    private readonly byte* _record;
    private readonly NativeAllocator _allocator;

    /// <summary>The entry whose record <paramref name="record"/> (from <see cref="Record"/>) came from <paramref name="allocator"/>.</summary>
    public CompressedSecondaryEntry(nint record, NativeAllocator allocator)
    {
        _record = (byte*)record;
        _allocator = allocator;
    }

    /// <summary>The record's address, what the cache entry holds.</summary>
    public nint Record => (nint)_record;

    public long RequestedBytes => *(int*)_record;

    public long AllocatedBytes => *(int*)(_record + 4);

    public uint Checksum => *(uint*)(_record + 8);

    public int StoredLength => *(int*)(_record + 12);

    public int UncompressedLength => *(int*)(_record + 16);

    public CompressionType Compression => (CompressionType)_record[20];

    public CacheEntryRole Role => (CacheEntryRole)_record[21];

    public int ChunkCount => _record[22];

    private bool Split => _record[23] != 0;

    /// <summary>Copies <paramref name="stored"/> into chunks from <paramref name="allocator"/>, under a new record.</summary>
    public static CompressedSecondaryEntry Create(ReadOnlySpan<byte> stored, int uncompressedLength, CompressionType compression, CacheEntryRole role, NativeAllocator allocator, bool split)
    {
        Span<int> sizes = stackalloc int[ChunkSplitter.MaxChunks];
        int count = ChunkSplitter.Plan(stored.Length, split, sizes);
        bool debug = allocator.DebugChecks;
        NativeBuffer record = allocator.Allocate(RecordBytes(count, debug), use: NativeUse.SecondaryCache);
        byte* r = record.Pointer;
        var chunks = (byte**)(r + ChunksOffset);
        int filled = 0;
        try
        {
            for (; filled < count; filled++)
            {
                NativeBuffer chunk = allocator.Allocate(sizes[filled], use: NativeUse.SecondaryCache);
                chunks[filled] = chunk.Pointer;
                if (debug)
                {
                    Tags(r, count)[filled] = chunk.Tag;
                }
            }
        }
        catch
        {
            for (int i = 0; i < filled; i++)
            {
                ChunkBuffer(allocator, chunks[i], sizes[i], debug ? Tags(r, count)[i] : (long)NativeUse.SecondaryCache).Dispose();
            }
            record.Dispose();
            throw;
        }
        int offset = 0;
        long requested = 0, allocated = 0;
        for (int i = 0; i < count; i++)
        {
            byte* p = chunks[i];
            int payload = sizes[i] - ChunkSplitter.HeaderBytes;
            var header = new Span<byte>(p, ChunkSplitter.HeaderBytes);
            BinaryPrimitives.WriteUInt64LittleEndian(header, i + 1 < count ? (ulong)(nint)chunks[i + 1] : 0UL);
            BinaryPrimitives.WriteInt32LittleEndian(header[8..], payload);
            BinaryPrimitives.WriteInt32LittleEndian(header[12..], 0);
            stored.Slice(offset, payload).CopyTo(new Span<byte>(p + ChunkSplitter.HeaderBytes, payload));
            offset += payload;
            requested += sizes[i];
            allocated += SizeClasses.UsableSize(sizes[i]);
        }
        *(int*)r = (int)requested;
        *(int*)(r + 4) = (int)allocated;
        *(uint*)(r + 8) = Crc32C.Compute(stored);
        *(int*)(r + 12) = stored.Length;
        *(int*)(r + 16) = uncompressedLength;
        r[20] = (byte)compression;
        r[21] = (byte)role;
        r[22] = (byte)count;
        r[23] = split ? (byte)1 : (byte)0;
        if (debug)
        {
            Tags(r, count)[count] = record.Tag;
        }
        return new CompressedSecondaryEntry((nint)r, allocator);
    }

    /// <summary>Merges the chunks into <paramref name="destination"/> (<see cref="StoredLength"/> bytes); false when a header or the checksum is wrong.</summary>
    public bool TryMerge(Span<byte> destination)
    {
        if (destination.Length != StoredLength)
        {
            return false;
        }
        int count = ChunkCount;
        Span<int> sizes = stackalloc int[ChunkSplitter.MaxChunks];
        ChunkSplitter.Plan(StoredLength, Split, sizes);
        var chunks = (byte**)(_record + ChunksOffset);
        int offset = 0;
        byte* p = chunks[0];
        for (int i = 0; i < count; i++)
        {
            if (p != chunks[i])
            {
                return false;
            }
            var header = new ReadOnlySpan<byte>(p, ChunkSplitter.HeaderBytes);
            ulong next = BinaryPrimitives.ReadUInt64LittleEndian(header);
            int size = BinaryPrimitives.ReadInt32LittleEndian(header[8..]);
            if (size < 0 || size > sizes[i] - ChunkSplitter.HeaderBytes || size > StoredLength - offset)
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
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(chunk, ChunkCount);
        Span<int> sizes = stackalloc int[ChunkSplitter.MaxChunks];
        ChunkSplitter.Plan(StoredLength, Split, sizes);
        byte* c = ((byte**)(_record + ChunksOffset))[chunk];
        c[ChunkSplitter.HeaderBytes + (byteIndex % (sizes[chunk] - ChunkSplitter.HeaderBytes))] ^= 0x10;
    }

    /// <summary>The allocation sizes of the chunks (requested and usable).</summary>
    internal (int Requested, int Usable)[] ChunkSizes()
    {
        var sizes = new int[ChunkSplitter.MaxChunks];
        int count = ChunkSplitter.Plan(StoredLength, Split, sizes);
        var result = new (int, int)[count];
        for (int i = 0; i < count; i++)
        {
            result[i] = (sizes[i], SizeClasses.UsableSize(sizes[i]));
        }
        return result;
    }

    /// <summary>Frees the chunks and the record. Once, by the entry's one owner.</summary>
    public void Free()
    {
        int count = ChunkCount;
        bool debug = _allocator.DebugChecks;
        Span<int> sizes = stackalloc int[ChunkSplitter.MaxChunks];
        ChunkSplitter.Plan(StoredLength, Split, sizes);
        var chunks = (byte**)(_record + ChunksOffset);
        for (int i = 0; i < count; i++)
        {
            ChunkBuffer(_allocator, chunks[i], sizes[i], debug ? Tags(_record, count)[i] : (long)NativeUse.SecondaryCache).Dispose();
        }
        int recordBytes = RecordBytes(count, debug);
        long recordTag = debug ? Tags(_record, count)[count] : (long)NativeUse.SecondaryCache;
        new NativeBuffer(_allocator, _record, recordBytes, SizeClasses.UsableSize(recordBytes), recordTag).Dispose();
    }

    private static int RecordBytes(int count, bool debug) => ChunksOffset + (count * sizeof(nint)) + (debug ? (count + 1) * sizeof(long) : 0);

    private static long* Tags(byte* record, int count) => (long*)(record + ChunksOffset + (count * sizeof(nint)));

    private static NativeBuffer ChunkBuffer(NativeAllocator allocator, byte* chunk, int size, long tag) =>
        new(allocator, chunk, size, SizeClasses.UsableSize(size), tag);
}
