namespace KvEngine.Memory;

/// <summary>
/// What a <see cref="NativeAllocator"/> block is for, so the allocator can say where its live bytes
/// went (<see cref="NativeAllocator.GetLiveBytesByUse"/>, kvbench's memory breakdown). In memory
/// only (never persisted); at most <see cref="NativeAllocator.UseSlots"/> values.
/// </summary>
internal enum NativeUse : byte
{
    /// <summary>Anything not named below.</summary>
    Other = 0,

    /// <summary>Memtable arena blocks (skip list, entries, hash-index buckets).</summary>
    Memtable = 1,

    /// <summary>Decompressed table blocks: block-cache entries, blocks read outside the cache (compaction inputs, <c>fill_cache=false</c>), and the restart-key prefixes of a table reader's own index block.</summary>
    TableBlock = 2,

    /// <summary>Bloom filter bits a table reader holds (or the cache holds) for reading.</summary>
    Filter = 3,

    /// <summary>Filter building: the key-hash buffer and the bits of a filter being finished.</summary>
    FilterBuild = 4,

    /// <summary>Table-building buffers spilled to native memory (index blocks, filter output).</summary>
    BuildBuffer = 5,

    /// <summary>Compressed secondary cache chunks, and blocks it decompresses on promotion.</summary>
    SecondaryCache = 6,

    /// <summary>Block cache and secondary cache entries (<see cref="Cache.LruEntry"/>): keys, links, a native block's restart array.</summary>
    CacheEntry = 7,
}
