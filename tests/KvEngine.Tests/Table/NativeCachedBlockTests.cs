using System.Text;
using KvEngine.Cache;
using KvEngine.Compression;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Memory;
using KvEngine.Table;

namespace KvEngine.Tests.Table;

/// <summary>
/// Native blocks held in their block cache entries (<see cref="LruCache.TryInsertBlock"/>): the entry
/// owns the bytes, readers get pooled views, and every buffer and entry is freed exactly once. Each
/// test runs on its own checking allocator (double frees throw; freed bytes are poisoned, so a view
/// read after its entry was freed sees 0xDD instead of its data).
/// </summary>
public class NativeCachedBlockTests
{
    private static NativeAllocator NewAllocator() => new(new NativeAllocatorOptions { DebugChecks = true });

    private static Block NewNativeBlock(NativeAllocator allocator, int entries, int seed, out byte[] bytes) =>
        NewNativeBlock(allocator, entries, seed, out bytes, out _);

    private static unsafe Block NewNativeBlock(NativeAllocator allocator, int entries, int seed, out byte[] bytes, out nint address)
    {
        using var builder = new BlockBuilder(4);
        for (int i = 0; i < entries; i++)
        {
            builder.Add(Encoding.ASCII.GetBytes($"key{i:D5}"), Encoding.ASCII.GetBytes($"value{seed}-{i}"));
        }
        bytes = builder.Finish().ToArray();
        NativeBuffer buffer = allocator.Allocate(bytes.Length, use: NativeUse.TableBlock);
        bytes.CopyTo(buffer.Span);
        address = (nint)buffer.Pointer;
        return Block.RentNative(buffer, CacheEntryRole.Data, "t.sst", "data", 4096);
    }

    private static long LiveBytes(NativeAllocator allocator, NativeUse use)
    {
        Span<long> byUse = stackalloc long[NativeAllocator.UseSlots];
        allocator.GetLiveBytesByUse(byUse);
        return byUse[(int)use];
    }

    /// <summary>No block, cache entry or secondary cache chunk of <paramref name="allocator"/> is still allocated.</summary>
    private static void AssertNothingLive(NativeAllocator allocator)
    {
        Assert.Equal(0, LiveBytes(allocator, NativeUse.TableBlock));
        Assert.Equal(0, LiveBytes(allocator, NativeUse.CacheEntry));
        Assert.Equal(0, LiveBytes(allocator, NativeUse.SecondaryCache));
    }

    private static string ValueAt(Block block, int i)
    {
        var cursor = new BlockCursor(block, BlockKeyFormat.Bytewise);
        try
        {
            cursor.Seek(Encoding.ASCII.GetBytes($"key{i:D5}"));
            Assert.True(cursor.Valid);
            return Encoding.ASCII.GetString(cursor.Value);
        }
        finally
        {
            cursor.Dispose();
        }
    }

    /// <summary>
    /// A block of at least 50 entries whose size class leaves room for the cache entry after its
    /// bytes (<paramref name="roomForEntry"/>) or not.
    /// </summary>
    private static Block NewNativeBlock(NativeAllocator allocator, bool roomForEntry, int seed, out byte[] bytes, out int entries)
    {
        const int EntryBytes = 64 + 16; // the entry and, with debug checks, two allocator tags
        for (entries = 50; ; entries++)
        {
            Block block = NewNativeBlock(allocator, entries, seed, out bytes, out nint address);
            int usable = SizeClasses.UsableSize(bytes.Length);
            bool room = usable - bytes.Length >= EntryBytes
                && (address + usable - 1) / 4096 == (address + bytes.Length - 1) / 4096; // LruCache's rule: the tail on the page of the last byte
            if (room == roomForEntry)
            {
                return block;
            }
            block.Dispose();
        }
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void TheEntryTakesTheBufferAndTheBlockBecomesAView(bool entryInBlock)
    {
        using NativeAllocator allocator = NewAllocator();
        using var cache = new LruCache(new LruCacheOptions { Capacity = 1 << 20, NumShardBits = 0, Allocator = allocator });
        Block block = NewNativeBlock(allocator, entryInBlock, 1, out byte[] bytes, out int entries);
        int usable = SizeClasses.UsableSize(bytes.Length);
        int entryBytes = 64 + 16;
        var key = new CacheKey(7, 4096);

        Assert.True(cache.TryInsertBlock(key, block, CachePriority.Low, out LruHandle? inserted));
        LruHandle h = inserted!.Value;
        Assert.True(h.IsNativeBlock);
        Assert.True(block.IsView);
        Assert.Equal(0, block.AllocatedBytes); // the view owns nothing
        // The entry sits in the block's spare tail when it fits: one allocation, charged as two.
        long valueShare = entryInBlock ? usable - entryBytes : usable;
        Assert.Equal(valueShare + cache.EntryOverheadBytes, cache.Usage);
        Assert.Equal((bytes.Length, valueShare), cache.ValueBytes);
        Assert.Equal(bytes.Length, h.RequestedBytes);
        Assert.Equal(valueShare, h.AllocatedBytes);
        Assert.Equal(usable, LiveBytes(allocator, NativeUse.TableBlock));
        Assert.Equal(entryInBlock ? 0 : SizeClasses.UsableSize(entryBytes), LiveBytes(allocator, NativeUse.CacheEntry));
        Assert.Throws<InvalidOperationException>(() => h.Value); // no managed value behind a native entry
        Assert.Equal("value1-42", ValueAt(block, 42));

        // A second reader: a lease over a fresh view of the same bytes.
        BlockLease lease = BlockLease.Cached(cache.Lookup(key)!.Value, cache, "t.sst", "data");
        Assert.NotSame(block, lease.Block);
        Assert.True(lease.Block.IsView);
        Assert.Equal(block.NumRestarts, lease.Block.NumRestarts);
        Assert.Equal(block.RestartsOffset, lease.Block.RestartsOffset);
        Assert.Equal($"value1-{entries - 1}", ValueAt(lease.Block, entries - 1));
        Assert.Equal("t.sst: data block at offset 4096", lease.Block.Source);

        new BlockLease(block, h, cache).Release(); // the inserter's lease: its view back to the pool, one reference less
        cache.Erase(key);
        Assert.Equal(usable, LiveBytes(allocator, NativeUse.TableBlock)); // still referenced by the second lease
        Assert.Equal("value1-7", ValueAt(lease.Block, 7));
        lease.Release();
        AssertNothingLive(allocator);
        Assert.Equal(0, cache.Usage);
    }

    [Fact]
    public void ABlockFromAnotherAllocatorStaysAnObjectInTheCache()
    {
        using NativeAllocator allocator = NewAllocator();
        using NativeAllocator other = NewAllocator();
        using var cache = new LruCache(new LruCacheOptions { Capacity = 1 << 20, NumShardBits = 0, Allocator = allocator });
        Block block = NewNativeBlock(other, 10, 2, out _);
        Assert.True(cache.TryInsertBlock(new CacheKey(1, 0), block, CachePriority.Low, out LruHandle? h));
        Assert.False(h!.Value.IsNativeBlock);
        Assert.False(block.IsView);
        Assert.Same(block, h.Value.Value);
        BlockLease lease = BlockLease.Cached(h.Value, cache, "t.sst", "data");
        Assert.Same(block, lease.Block);
        lease.Release();
        cache.EraseUnreferenced();
        Assert.Equal(0, LiveBytes(other, NativeUse.TableBlock));
        Assert.Equal(0, LiveBytes(allocator, NativeUse.CacheEntry));
    }

    [Theory]
    [InlineData(true)] // the refused entry was written in the block's tail and stays there, unused
    [InlineData(false)] // the refused entry was an allocation of its own, freed
    public void AStrictCacheWithoutRoomLeavesTheBlockItsBuffer(bool entryInBlock)
    {
        using NativeAllocator allocator = NewAllocator();
        using var cache = new LruCache(new LruCacheOptions { Capacity = 256, NumShardBits = 0, StrictCapacity = true, Allocator = allocator });
        Block block = NewNativeBlock(allocator, entryInBlock, 3, out byte[] bytes, out _);
        Assert.False(cache.TryInsertBlock(new CacheKey(1, 0), block, CachePriority.Low, out LruHandle? h));
        Assert.Null(h);
        Assert.False(block.IsView);
        Assert.Equal(bytes.Length, block.RequestedBytes);
        Assert.Equal(0, LiveBytes(allocator, NativeUse.CacheEntry)); // the refused entry was freed
        Assert.Equal("value3-49", ValueAt(block, 49));
        block.Dispose();
        Assert.Equal(0, LiveBytes(allocator, NativeUse.TableBlock));
    }

    [Fact]
    public void EvictedNativeBlocksAreDemotedAndPromotedByteIdentical()
    {
        using NativeAllocator allocator = NewAllocator();
        using var secondary = new CompressedSecondaryCache(new CompressedSecondaryCacheOptions { Capacity = 4 << 20, NumShardBits = 0, Allocator = allocator });
        using var primary = new LruCache(new LruCacheOptions { Capacity = 16 << 10, NumShardBits = 0, Allocator = allocator }, secondary);
        var factory = new NativeBlockFactory();
        var blocks = new Dictionary<ulong, byte[]>();
        for (int pass = 0; pass < 2; pass++)
        {
            for (ulong i = 0; i < 40; i++)
            {
                var key = new CacheKey(5, i * 4096);
                if (primary.Lookup(key) is LruHandle hit)
                {
                    primary.Release(hit);
                    continue;
                }
                Block block = NewNativeBlock(allocator, 60, (int)i, out byte[] bytes);
                blocks[i] = bytes;
                Assert.True(primary.TryInsertBlock(key, block, CachePriority.Low, out LruHandle? h));
                new BlockLease(block, h, primary).Release();
            }
        }
        int promoted = 0;
        for (ulong i = 0; i < 40; i++)
        {
            if (primary.Lookup(new CacheKey(5, i * 4096), factory, CachePriority.Low, null, out bool wasPromoted) is LruHandle h)
            {
                Assert.True(h.IsNativeBlock); // a promoted block lives in its entry too
                BlockLease lease = BlockLease.Cached(h, primary, "t.sst", "data");
                Assert.Equal(blocks[i], lease.Block.Contents.ToArray());
                Assert.Equal($"value{i}-33", ValueAt(lease.Block, 33));
                lease.Release();
                promoted += wasPromoted ? 1 : 0;
            }
        }
        Assert.True(promoted > 10, $"{promoted} promoted");
        primary.EraseUnreferenced();
        secondary.Inner.EraseUnreferenced();
        AssertNothingLive(allocator);
    }

    [Fact]
    public void TableReadsThroughASmallCacheReturnEveryValueAndFreeEverything()
    {
        using NativeAllocator allocator = NewAllocator();
        var stats = new KvStatistics();
        using (var secondary = new CompressedSecondaryCache(new CompressedSecondaryCacheOptions { Capacity = 256 << 10, NumShardBits = 0, Allocator = allocator }))
        using (var cache = new LruCache(new LruCacheOptions { Capacity = 48 << 10, NumShardBits = 1, Allocator = allocator }, secondary))
        {
            var options = new TableOptions { Compression = CompressionType.Lz4, BlockCache = cache, BlockAllocator = allocator, Statistics = stats };
            List<Entry> entries = TableTestUtil.MakeEntries(3000, seed: 11);
            byte[] table = TableTestUtil.Build(options, entries);
            using (TableReader reader = TableTestUtil.Open(table, options))
            {
                var rnd = new Random(3);
                var value = new System.Buffers.ArrayBufferWriter<byte>();
                for (int round = 0; round < 3; round++)
                {
                    for (int n = 0; n < 2000; n++)
                    {
                        Entry e = entries[rnd.Next(entries.Count)];
                        value.Clear();
                        byte[] user = InternalKeys.UserKey(e.Key).ToArray();
                        Assert.True(reader.TryGet(user, InternalKeys.MaxSequenceNumber, value, out _, verifyChecksums: true));
                    }
                    using InternalIterator scan = reader.NewIterator(verifyChecksums: true);
                    TableTestUtil.AssertSame(entries, TableTestUtil.ScanForward(scan));
                }
            }
            Assert.True(stats.GetTickerCount(Ticker.BlockCacheDataMiss) > 100);
            Assert.True(stats.GetTickerCount(Ticker.SecondaryCacheHits) > 0, stats.ToString());
            cache.EraseUnreferenced();
            secondary.Inner.EraseUnreferenced();
            Assert.Equal(0, cache.Count);
        }
        AssertNothingLive(allocator);
    }

    [Fact]
    public void ConcurrentReadersInsertersAndErasersFreeEveryBlockOnce()
    {
        // Four threads look up (reading each block through a view), insert native blocks and erase
        // keys of one small cache, so entries are replaced, evicted and erased while others hold
        // views of them. The checking allocator throws on a double free, and poisons freed bytes:
        // a view read after its entry was freed would see the wrong value.
        using NativeAllocator allocator = NewAllocator();
        var errors = new System.Collections.Concurrent.ConcurrentQueue<Exception>();
        using (var cache = new LruCache(new LruCacheOptions { Capacity = 64 << 10, NumShardBits = 2, Allocator = allocator }))
        {
            var threads = new Thread[4];
            for (int t = 0; t < threads.Length; t++)
            {
                int seed = t;
                threads[t] = new Thread(() =>
                {
                    try
                    {
                        var rnd = new Random(seed);
                        for (int i = 0; i < 4000; i++)
                        {
                            int k = rnd.Next(64);
                            var key = new CacheKey(3, (ulong)k * 4096);
                            int op = rnd.Next(100);
                            if (op < 60)
                            {
                                if (cache.Lookup(key) is LruHandle h)
                                {
                                    BlockLease lease = BlockLease.Cached(h, cache, "t.sst", "data");
                                    string expected = $"value{k}-{k % 20}";
                                    string actual = ValueAt(lease.Block, k % 20);
                                    lease.Release();
                                    if (actual != expected)
                                    {
                                        throw new InvalidOperationException($"read {actual}, expected {expected}");
                                    }
                                }
                            }
                            else if (op < 95)
                            {
                                Block block = NewNativeBlock(allocator, 20, k, out _);
                                if (cache.TryInsertBlock(key, block, CachePriority.Low, out LruHandle? h))
                                {
                                    new BlockLease(block, h, cache).Release();
                                }
                                else
                                {
                                    block.Dispose();
                                }
                            }
                            else
                            {
                                cache.Erase(key);
                            }
                        }
                    }
                    catch (Exception e)
                    {
                        errors.Enqueue(e);
                    }
                });
                threads[t].Start();
            }
            foreach (Thread t in threads)
            {
                t.Join();
            }
            Assert.Empty(errors);
            Assert.Equal(0, cache.PinnedUsage);
            Assert.True(cache.Usage <= cache.Capacity);
            cache.EraseUnreferenced();
        }
        AssertNothingLive(allocator);
    }

    /// <summary>Rebuilds promoted data blocks as native blocks (what a table reader does).</summary>
    private sealed class NativeBlockFactory : ICacheValueFactory
    {
        public CacheValue Create(NativeBuffer contents, in CacheKey key, CacheEntryRole role) =>
            Block.RentNative(contents, role, "t.sst", "data", key.Offset);
    }
}
