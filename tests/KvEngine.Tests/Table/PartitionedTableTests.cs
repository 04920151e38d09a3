using System.Text;
using KvEngine.Cache;
using KvEngine.Filters;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Memory;
using KvEngine.Table;
using KvEngine.Util;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Table;

/// <summary>Partitioned index and filters: layout, boundaries, iterators, caching and pinning, corruption, filter quality.</summary>
public sealed class PartitionedTableTests
{
    public static TheoryData<bool, int, int> Layouts() => new()
    {
        { false, 4096, 0 },
        { true, 4096, 0 },
        { false, 256, 1 },
        { true, 256, 1 },
        { true, 300, 2 },
        { false, 300, 3 },
        { true, 512, 4 },
    };

    /// <summary>Reader configurations: 0 no cache, 1 cache, 2 cached metadata, 3 cached + all partitions pinned, 4 cached, nothing pinned.</summary>
    private static TableOptions ReadOptions(TableOptions write, int mode, KvStatistics? stats = null) => mode switch
    {
        0 => write with { Statistics = stats },
        1 => write with { BlockCache = new LruCache(new LruCacheOptions { Capacity = 1 << 20 }), Statistics = stats },
        2 => write with { BlockCache = new LruCache(new LruCacheOptions { Capacity = 1 << 20 }), CacheIndexAndFilterBlocks = true, Statistics = stats },
        3 => write with
        {
            BlockCache = new LruCache(new LruCacheOptions { Capacity = 1 << 20 }), CacheIndexAndFilterBlocks = true,
            PartitionPinning = PinningTier.All, Statistics = stats,
        },
        _ => write with
        {
            BlockCache = new LruCache(new LruCacheOptions { Capacity = 64 << 10 }), CacheIndexAndFilterBlocks = true,
            PinTopLevelIndexAndFilter = false, Statistics = stats,
        },
    };

    [Theory]
    [MemberData(nameof(Layouts))]
    public void GetsAndIteratorsAgreeWithTheEntriesAtEveryPartitionBoundary(bool decoupled, int metadataBlockSize, int readMode)
    {
        TableOptions write = PartitionedTables.Options(decoupled, metadataBlockSize);
        List<Entry> entries = TableTestUtil.MakeEntries(metadataBlockSize >= 4096 ? 40_000 : 8000, seed: metadataBlockSize + readMode, maxValue: 40);
        byte[] table = TableTestUtil.Build(write, entries);
        using TableReader reader = TableTestUtil.Open(table, ReadOptions(write, readMode));
        PartitionedLayout layout = PartitionedLayout.Read(table, reader.Properties);
        Assert.Equal(IndexType.TwoLevelIndexSearch, reader.Properties.IndexType);
        Assert.Equal((ulong)layout.IndexPartitions.Count, reader.Properties.IndexPartitions);
        Assert.True(layout.IndexPartitions.Count > 2, $"{layout.IndexPartitions.Count} partitions");
        Assert.True(layout.FilterPartitions.Count > 1, $"{layout.FilterPartitions.Count} filter partitions");

        using (InternalIterator it = reader.NewIterator(true))
        {
            TableTestUtil.AssertSame(entries, TableTestUtil.ScanForward(it));
            TableTestUtil.AssertSame(entries, TableTestUtil.ScanBackward(it));
        }
        TableRoundTripTests.AssertGets(reader, entries);

        var keys = entries.Select(e => e.Key).ToList();
        using var value = new ByteBuffer();
        using InternalIterator seek = reader.NewIterator(true);
        for (int p = 0; p < layout.IndexPartitions.Count; p++)
        {
            List<BlockHandle> blocks = layout.DataBlocks[p];
            Entry first = PartitionedLayout.DataEntries(table, blocks[0])[0];
            Entry last = PartitionedLayout.DataEntries(table, blocks[^1])[^1];
            foreach (Entry e in new[] { first, last })
            {
                value.Clear();
                Assert.True(reader.TryGet(InternalKeys.UserKey(e.Key), InternalKeys.Sequence(e.Key), value, out ValueType type, true), e.Describe());
                Assert.Equal(InternalKeys.Type(e.Key), type);
                Assert.True(reader.KeyMayMatch(InternalKeys.UserKey(e.Key)));
            }

            // The separator itself: a Get finds exactly what the entries hold; a seek lands on the first entry >= it.
            byte[] sepUser = PartitionedLayout.UserKeyOf(layout.IndexPartitions[p].Key, layout.UserKeys);
            Entry? newest = entries.FirstOrDefault(e => InternalKeys.UserKey(e.Key).SequenceEqual(sepUser));
            value.Clear();
            Assert.Equal(newest != null, reader.TryGet(sepUser, InternalKeys.MaxSequenceNumber, value, out _, true));
            byte[] target = InternalKeys.Create(sepUser, InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek);
            seek.Seek(target);
            int expected = keys.FindIndex(k => InternalKeyComparer.Compare(k, target) >= 0);
            Assert.Equal(expected >= 0, seek.Valid);
            if (expected >= 0)
            {
                Assert.Equal(entries[expected].Describe(), new Entry(seek.Key.ToArray(), seek.Value.ToArray()).Describe());
                seek.Prev();
                Assert.Equal(expected > 0, seek.Valid);
                if (expected > 0)
                {
                    Assert.Equal(entries[expected - 1].Describe(), new Entry(seek.Key.ToArray(), seek.Value.ToArray()).Describe());
                }
            }
            seek.SeekForPrev(target);
            int before = keys.FindLastIndex(k => InternalKeyComparer.Compare(k, target) <= 0);
            Assert.Equal(before >= 0, seek.Valid);
            if (before >= 0)
            {
                Assert.Equal(entries[before].Describe(), new Entry(seek.Key.ToArray(), seek.Value.ToArray()).Describe());
            }
        }

        // Past the last partition (every top-level key < target): nothing, and iterators end.
        byte[] past = Encoding.ASCII.GetBytes("key9999999z");
        value.Clear();
        Assert.False(reader.TryGet(past, InternalKeys.MaxSequenceNumber, value, out _, true));
        seek.Seek(InternalKeys.Create(past, InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek));
        Assert.False(seek.Valid);
        seek.SeekForPrev(InternalKeys.Create(past, 0, ValueType.Deletion));
        Assert.True(seek.Valid);
        Assert.Equal(entries[^1].Describe(), new Entry(seek.Key.ToArray(), seek.Value.ToArray()).Describe());
    }

    [Theory]
    [InlineData(false, 0)]
    [InlineData(true, 3)]
    public void AnEmptyOrOneBlockTableHasOnePartitionAtMost(bool decoupled, int readMode)
    {
        TableOptions write = PartitionedTables.Options(decoupled);
        foreach (int count in new[] { 0, 1, 5 })
        {
            List<Entry> entries = TableTestUtil.MakeEntries(count, seed: count);
            byte[] table = TableTestUtil.Build(write, entries);
            using TableReader reader = TableTestUtil.Open(table, ReadOptions(write, readMode));
            Assert.Equal(count == 0 ? 0UL : 1UL, reader.Properties.IndexPartitions);
            using (InternalIterator it = reader.NewIterator(true))
            {
                TableTestUtil.AssertSame(entries, TableTestUtil.ScanForward(it));
                TableTestUtil.AssertSame(entries, TableTestUtil.ScanBackward(it));
                it.Seek(InternalKeys.Create("a"u8, 1, ValueType.Value));
                Assert.Equal(count > 0, it.Valid);
            }
            TableRoundTripTests.AssertGets(reader, entries);
        }
    }

    [Fact]
    public void PartitionFiltersWithoutATwoLevelIndexWritesAFullFilterAndOtherIndexTypesAreRefused()
    {
        TableOptions options = PartitionedTables.Options(decoupled: true) with { IndexType = IndexType.BinarySearch };
        List<Entry> entries = TableTestUtil.MakeEntries(2000, seed: 3);
        byte[] table = TableTestUtil.Build(options, entries);
        using (TableReader reader = TableTestUtil.Open(table, options))
        {
            Assert.Equal(IndexType.BinarySearch, reader.Properties.IndexType);
            Assert.Equal(0UL, reader.Properties.IndexPartitions);
            Assert.True(reader.HasFilter);
            Assert.Contains(TableFormat.FullFilterBlockPrefix + "rocksdb.BuiltinBloomFilter", Encoding.ASCII.GetString(table), StringComparison.Ordinal);
            Assert.DoesNotContain(TableFormat.PartitionedFilterBlockPrefix, Encoding.ASCII.GetString(table), StringComparison.Ordinal);
            TableRoundTripTests.AssertGets(reader, entries);
        }
        foreach (IndexType refused in new[] { IndexType.HashSearch, IndexType.BinarySearchWithFirstKey })
        {
            Assert.Throws<ArgumentException>(() => TableTestUtil.Build(options with { IndexType = refused }, entries));
        }
        Assert.ThrowsAny<ArgumentException>(() => TableTestUtil.Build(options with { IndexType = IndexType.TwoLevelIndexSearch, MetadataBlockSize = 0 }, entries));
    }

    [Fact]
    public void DecoupledFilterPartitionsAreCutOnTheirOwnCountAndCoupledOnesWithTheIndex()
    {
        var entries = new List<Entry>();
        for (int i = 0; i < 20_000; i++)
        {
            entries.Add(new Entry(InternalKeys.Create(Encoding.ASCII.GetBytes($"k{i:D8}"), 1, ValueType.Value), new byte[8]));
        }
        TableOptions coupledOptions = PartitionedTables.Options(decoupled: false);
        TableOptions decoupledOptions = PartitionedTables.Options(decoupled: true);
        byte[] coupled = TableTestUtil.Build(coupledOptions, entries);
        byte[] decoupled = TableTestUtil.Build(decoupledOptions, entries);
        using TableReader coupledReader = TableTestUtil.Open(coupled, coupledOptions);
        using TableReader decoupledReader = TableTestUtil.Open(decoupled, decoupledOptions);
        PartitionedLayout c = PartitionedLayout.Read(coupled, coupledReader.Properties);
        PartitionedLayout d = PartitionedLayout.Read(decoupled, decoupledReader.Properties);

        // Decoupled, the index is cut by size alone, as with no partitioned filter at all; coupled,
        // the filter's requests cut it earlier.
        TableOptions indexOnly = decoupledOptions with { PartitionFilters = false };
        byte[] plain = TableTestUtil.Build(indexOnly, entries);
        using (TableReader plainReader = TableTestUtil.Open(plain, indexOnly))
        {
            PartitionedLayout i = PartitionedLayout.Read(plain, plainReader.Properties);
            Assert.Empty(i.FilterPartitions);
            Assert.Equal(i.IndexPartitions.Select(p => Convert.ToHexString(p.Key)), d.IndexPartitions.Select(p => Convert.ToHexString(p.Key)));
            Assert.True(c.IndexPartitions.Count > i.IndexPartitions.Count, $"coupled {c.IndexPartitions.Count}, size only {i.IndexPartitions.Count}");
        }
        // Coupled (RocksDB 7.8): one filter partition per index partition; each one's key is the
        // separator of the data block after its index partition's last one.
        Assert.Equal(c.IndexPartitions.Count, c.FilterPartitions.Count);
        for (int p = 0; p + 1 < c.IndexPartitions.Count; p++)
        {
            Assert.True(c.FilterPartitions[p].Key.AsSpan().SequenceCompareTo(c.IndexPartitions[p].Key) > 0);
            Assert.True(c.FilterPartitions[p].Key.AsSpan().SequenceCompareTo(c.IndexPartitions[p + 1].Key) <= 0);
        }
        // Decoupled: every partition but the last holds exactly keys_per_partition keys, and its key
        // is its last user key (user-key mode: no user key spans two data blocks here).
        long perPartition = PartitionedFilterBlockBuilder.KeysPerPartition(decoupledOptions.FilterPolicy!, 4096, 10);
        Assert.Equal(2918, perPartition); // ApproximateNumEntries(3687 bytes) at 10 bits/key
        Assert.True(d.UserKeys);
        Assert.Equal((int)((entries.Count + perPartition - 1) / perPartition), d.FilterPartitions.Count);
        for (int p = 0; p < d.FilterPartitions.Count; p++)
        {
            long lastIndex = Math.Min(((p + 1) * perPartition) - 1, entries.Count - 1);
            Assert.Equal(Convert.ToHexString(InternalKeys.UserKey(entries[(int)lastIndex].Key)), Convert.ToHexString(d.FilterPartitions[p].Key));
        }
        Assert.NotEqual(c.FilterPartitions.Select(p => Convert.ToHexString(p.Key)), d.FilterPartitions.Select(p => Convert.ToHexString(p.Key)));

        foreach (TableReader r in new[] { coupledReader, decoupledReader })
        {
            TableRoundTripTests.AssertGets(r, entries);
        }
    }

    [Fact]
    public void DecoupledPartitionKeysAreInternalKeysWithAZeroTrailerWhenAUserKeySpansDataBlocks()
    {
        // Many versions per user key: data block boundaries split user keys, so index keys carry sequence numbers.
        var entries = new List<Entry>();
        for (int i = 0; i < 3000; i++)
        {
            for (int v = 0; v < 4; v++)
            {
                entries.Add(new Entry(InternalKeys.Create(Encoding.ASCII.GetBytes($"k{i:D6}"), (ulong)(100 - v), ValueType.Value), new byte[30]));
            }
        }
        TableOptions options = PartitionedTables.Options(decoupled: true, metadataBlockSize: 1024);
        byte[] table = TableTestUtil.Build(options, entries);
        using TableReader reader = TableTestUtil.Open(table, options);
        PartitionedLayout layout = PartitionedLayout.Read(table, reader.Properties);
        Assert.False(layout.UserKeys);
        Assert.True(layout.FilterPartitions.Count > 2);
        foreach ((byte[] key, BlockHandle _) in layout.FilterPartitions)
        {
            Assert.Equal(0UL, InternalKeys.Trailer(key));
        }
        TableRoundTripTests.AssertGets(reader, entries);
        using InternalIterator it = reader.NewIterator(true);
        TableTestUtil.AssertSame(entries, TableTestUtil.ScanBackward(it));
    }

    [Theory]
    [InlineData(false, 0)]
    [InlineData(true, 0)]
    [InlineData(false, 3)]
    [InlineData(true, 1)]
    public void ACorruptIndexPartitionRaisesKvCorruptionException(bool filterPartition, int readMode)
    {
        AssertCorruptPartitionDetected(filterPartition, readMode);
    }

    [Theory]
    [InlineData(false, 0)]
    [InlineData(true, 2)]
    [InlineData(false, 4)]
    [InlineData(true, 0)]
    public void ACorruptTopLevelIndexRaisesKvCorruptionExceptionAtOpen(bool filterIndex, int readMode)
    {
        TableOptions write = PartitionedTables.Options(decoupled: true, metadataBlockSize: 512);
        byte[] table = TableTestUtil.Build(write, TableTestUtil.MakeEntries(3000, seed: 6));
        BlockHandle h;
        using (TableReader clean = TableTestUtil.Open(table, write))
        {
            PartitionedLayout layout = PartitionedLayout.Read(table, clean.Properties);
            h = filterIndex ? layout.TopLevelFilterIndex : layout.TopLevelIndex;
        }
        table[(int)h.Offset + 1] ^= 0x08;
        KvCorruptionException e = Assert.Throws<KvCorruptionException>(() => TableTestUtil.Open(table, ReadOptions(write, readMode), "damaged.sst").Dispose());
        Assert.Contains("damaged.sst", e.Message, StringComparison.Ordinal);
        Assert.Contains(filterIndex ? "top-level filter index" : "top-level index", e.Message, StringComparison.Ordinal);
    }

    private static void AssertCorruptPartitionDetected(bool filterPartition, int readMode)
    {
        TableOptions write = PartitionedTables.Options(decoupled: true, metadataBlockSize: 512);
        List<Entry> entries = TableTestUtil.MakeEntries(4000, seed: 5);
        byte[] table = TableTestUtil.Build(write, entries);
        PartitionedLayout layout;
        using (TableReader clean = TableTestUtil.Open(table, write))
        {
            layout = PartitionedLayout.Read(table, clean.Properties);
        }
        int victim = 1;
        BlockHandle h = filterPartition ? layout.FilterPartitions[victim].Handle : layout.IndexPartitions[victim].Handle;
        table[(int)h.Offset + ((int)h.Size / 2)] ^= 0x40;

        // A key the damaged partition covers.
        byte[] user = filterPartition
            ? PartitionedLayout.UserKeyOf(layout.FilterPartitions[victim].Key, layout.UserKeys)
            : InternalKeys.UserKey(PartitionedLayout.DataEntries(table, layout.DataBlocks[victim][0])[0].Key).ToArray();
        using var value = new ByteBuffer();
        KvCorruptionException e = Assert.Throws<KvCorruptionException>(() =>
        {
            using TableReader reader = TableTestUtil.Open(table, ReadOptions(write, readMode), "damaged.sst");
            reader.TryGet(user, InternalKeys.MaxSequenceNumber, value, out _, true);
        });
        Assert.Contains("damaged.sst", e.Message, StringComparison.Ordinal);
        Assert.Contains(filterPartition ? "filter partition" : "index partition", e.Message, StringComparison.Ordinal);
        Assert.Contains($"offset {h.Offset}", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void PartitionedFiltersKeepTheFalsePositiveRateOfAFullFilter()
    {
        var entries = new List<Entry>();
        for (int i = 0; i < 60_000; i++)
        {
            entries.Add(new Entry(InternalKeys.Create(Encoding.ASCII.GetBytes($"present{i:D8}"), 1, ValueType.Value), [1]));
        }
        entries.Sort((a, b) => InternalKeyComparer.Compare(a.Key, b.Key));
        var full = new TableOptions { FilterPolicy = new FastLocalBloomPolicy(10) };
        double fullRate = FalsePositiveRate(full, entries);
        foreach (bool decoupled in new[] { false, true })
        {
            TableOptions partitioned = PartitionedTables.Options(decoupled);
            double rate = FalsePositiveRate(partitioned, entries);
            Assert.True(Math.Abs(rate - fullRate) <= fullRate * 0.10, $"decoupled={decoupled}: {rate:P3} vs full {fullRate:P3}");
        }
    }

    private static double FalsePositiveRate(TableOptions options, List<Entry> entries)
    {
        byte[] table = TableTestUtil.Build(options, entries);
        using TableReader reader = TableTestUtil.Open(table, options);
        Assert.True(reader.HasFilter);
        foreach (Entry e in entries)
        {
            Assert.True(reader.KeyMayMatch(InternalKeys.UserKey(e.Key)));
        }
        int positives = 0;
        const int queries = 200_000;
        for (int i = 0; i < queries; i++)
        {
            // Absent keys spread over the whole key range (and so over every partition).
            byte[] absent = Encoding.ASCII.GetBytes($"present{i % 60_000:D8}x{i / 60_000}");
            if (reader.KeyMayMatch(absent))
            {
                positives++;
            }
        }
        return (double)positives / queries;
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void OptimizeFiltersForMemorySizesEveryFilterPartition(bool decoupled)
    {
        using var allocator = new NativeAllocator(new NativeAllocatorOptions { DebugChecks = true });
        var policy = new FastLocalBloomPolicy(10);
        TableOptions options = PartitionedTables.Options(decoupled) with { FilterPolicy = policy, OptimizeFiltersForMemory = true, FilterAllocator = allocator };
        var entries = new List<Entry>();
        for (int i = 0; i < 30_000; i++)
        {
            entries.Add(new Entry(InternalKeys.Create(Encoding.ASCII.GetBytes($"m{i:D7}"), 1, ValueType.Value), [2]));
        }
        byte[] table = TableTestUtil.Build(options, entries);
        TableOptions pinned = options with { PartitionPinning = PinningTier.All };
        using TableReader reader = TableTestUtil.Open(table, pinned);
        PartitionedLayout layout = PartitionedLayout.Read(table, reader.Properties);
        Assert.True(layout.FilterPartitions.Count > 3);
        long bits = 0;
        foreach ((byte[] _, BlockHandle h) in layout.FilterPartitions)
        {
            Assert.True(SizeClasses.IsClassSize((long)h.Size - FastLocalBloomMath.MetadataLength), $"filter partition of {h.Size} bytes");
            bits += (long)h.Size - FastLocalBloomMath.MetadataLength;
        }
        // Pinned without a cache, the reader holds every partition's bits in exactly one size class each.
        Assert.Equal(bits, reader.FilterMemoryUsage);
        Assert.Equal(bits, allocator.GetUsage().AllocatedBytes);
        foreach (Entry e in entries)
        {
            Assert.True(reader.KeyMayMatch(InternalKeys.UserKey(e.Key)));
        }
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void CachedPartitionedGetsAllocateNothing(int readMode)
    {
        TableOptions write = PartitionedTables.Options(decoupled: true, metadataBlockSize: 512) with { Compression = KvEngine.Compression.CompressionType.Lz4 };
        List<Entry> entries = TableTestUtil.MakeEntries(3000, seed: 21);
        byte[] table = TableTestUtil.Build(write, entries);
        using TableReader reader = TableTestUtil.Open(table, ReadOptions(write, readMode));
        using var value = new ByteBuffer();
        byte[][] users = entries.Select(e => InternalKeys.UserKey(e.Key).ToArray()).ToArray();
        byte[][] absent = users.Select(u => (byte[])[.. u, (byte)'!']).ToArray();
        long perGet = 0;
        for (int round = 0; round < 3; round++)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            for (int i = 0; i < users.Length; i++)
            {
                value.Clear();
                reader.TryGet(users[i], InternalKeys.MaxSequenceNumber, value, out _, true);
                reader.TryGet(absent[i], InternalKeys.MaxSequenceNumber, value, out _, true);
            }
            perGet = (GC.GetAllocatedBytesForCurrentThread() - before) / (2 * users.Length);
        }
        // As in CacheHitAllocationTests: zero alone; ArrayPool.Shared may rarely hand out a fresh
        // key buffer under a parallel run. A block or lease object per Get would be >= 64 bytes.
        Assert.True(perGet < 16, $"{perGet} bytes allocated per partitioned Get");
    }

    [Fact]
    public void PinnedPartitionsAreReadInOneGoAndNeverMissAfterwards()
    {
        TableOptions write = PartitionedTables.Options(decoupled: true, metadataBlockSize: 512);
        List<Entry> entries = TableTestUtil.MakeEntries(4000, seed: 9);
        byte[] table = TableTestUtil.Build(write, entries);
        var stats = new KvStatistics();
        using TableReader reader = TableTestUtil.Open(table, ReadOptions(write, 3, stats));
        PartitionedLayout layout = PartitionedLayout.Read(table, reader.Properties);
        Assert.True(layout.IndexPartitions.Count > 3 && layout.FilterPartitions.Count > 3);
        // metaindex, properties, top-level index, top-level filter index, and one read per partition kind.
        Assert.Equal(6, stats.GetTickerCount(Ticker.BlockReads));
        Assert.Equal(2 + layout.IndexPartitions.Count + layout.FilterPartitions.Count, stats.GetTickerCount(Ticker.BlockCacheAdd));
        TableRoundTripTests.AssertGets(reader, entries);
        using (InternalIterator it = reader.NewIterator(true))
        {
            TableTestUtil.AssertSame(entries, TableTestUtil.ScanBackward(it));
        }
        Assert.Equal(0, stats.GetTickerCount(Ticker.BlockCacheIndexMiss));
        Assert.Equal(0, stats.GetTickerCount(Ticker.BlockCacheFilterMiss));
    }

    /// <summary>RocksDB's pinning decisions: a tier, or the older flag it falls back to; "flushed and similar" = a small level-0 table.</summary>
    [Theory]
    // pinTop flag, top tier, pinL0 flag, partition tier (0 fallback, 1 none, 2 flushed and similar, 3 all), maybe flushed -> top pinned, partitions pinned
    [InlineData(true, 0, false, 0, true, true, false)]
    [InlineData(false, 0, false, 0, true, false, false)]
    [InlineData(false, 3, false, 1, false, true, false)]
    [InlineData(true, 1, true, 0, true, false, true)]
    [InlineData(true, 0, true, 0, false, true, false)]
    [InlineData(false, 2, false, 2, true, true, true)]
    [InlineData(false, 2, false, 2, false, false, false)]
    [InlineData(false, 1, false, 3, false, false, true)]
    public void PinningTiersDecideWhatStaysInTheCache(bool pinTopFlag, int topTier, bool pinL0, int partitionTier, bool maybeFlushed,
        bool topPinned, bool partitionsPinned)
    {
        TableOptions write = PartitionedTables.Options(decoupled: true, metadataBlockSize: 512);
        List<Entry> entries = TableTestUtil.MakeEntries(3000, seed: 13);
        byte[] table = TableTestUtil.Build(write, entries);
        using var cache = new LruCache(new LruCacheOptions { Capacity = 4 << 20 });
        TableOptions read = write with
        {
            BlockCache = cache, CacheIndexAndFilterBlocks = true, PinTopLevelIndexAndFilter = pinTopFlag, TopLevelIndexPinning = (PinningTier)topTier,
            PinL0FilterAndIndexBlocksInCache = pinL0, PartitionPinning = (PinningTier)partitionTier,
        };
        using TableReader reader = TableReader.Open(new MemoryRandomAccessFile(table), table.Length, read, "t.sst", maybeFlushed);
        PartitionedLayout layout = PartitionedLayout.Read(table, reader.Properties);
        cache.EraseUnreferenced();
        int expected = (topPinned ? 2 : 0) + (partitionsPinned ? layout.IndexPartitions.Count + layout.FilterPartitions.Count : 0);
        Assert.Equal(expected, cache.Count);
        TableRoundTripTests.AssertGets(reader, entries);
    }

    [Fact]
    public void UnpinnedPartitionsGoThroughTheCacheAsIndexAndFilterEntries()
    {
        TableOptions write = PartitionedTables.Options(decoupled: true, metadataBlockSize: 512);
        List<Entry> entries = TableTestUtil.MakeEntries(4000, seed: 11);
        byte[] table = TableTestUtil.Build(write, entries);
        var stats = new KvStatistics();
        using TableReader reader = TableTestUtil.Open(table, ReadOptions(write, 1, stats));
        PartitionedLayout layout = PartitionedLayout.Read(table, reader.Properties);
        TableRoundTripTests.AssertGets(reader, entries);
        // Every partition was missed once, inserted, then hit (the 1 MiB cache holds the whole table).
        Assert.Equal(layout.IndexPartitions.Count, stats.GetTickerCount(Ticker.BlockCacheIndexMiss));
        Assert.Equal(layout.FilterPartitions.Count, stats.GetTickerCount(Ticker.BlockCacheFilterMiss));
        Assert.Equal(layout.IndexPartitions.Count, stats.GetTickerCount(Ticker.BlockCacheIndexAdd));
        Assert.Equal(layout.FilterPartitions.Count, stats.GetTickerCount(Ticker.BlockCacheFilterAdd));
        Assert.True(stats.GetTickerCount(Ticker.BlockCacheIndexHit) > 0);
        Assert.True(stats.GetTickerCount(Ticker.BlockCacheFilterHit) > 0);
    }
}
