using System.Buffers;
using System.Globalization;
using System.Text;
using KvEngine.Storage;

namespace KvEngine.Tests.Db;

/// <summary>
/// The memory properties RocksDB users read (rocksdb.estimate-table-readers-mem,
/// rocksdb.cur-size-all-mem-tables / rocksdb.size-all-mem-tables): what they count and what they
/// leave to the block cache's own properties.
/// </summary>
public class MemoryPropertyTests
{
    private static long Prop(KvDb db, string name) => long.Parse(db.GetProperty(name)!, CultureInfo.InvariantCulture);

    private static void Fill(KvDb db, int from, int count)
    {
        for (int i = from; i < from + count; i++)
        {
            db.Put(Encoding.ASCII.GetBytes($"key{i:D7}"), new byte[100]);
        }
    }

    [Fact]
    public void TableReadersMemoryCountsIndexAndFilterHeldByTheReaders()
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/m");
        using var db = KvDb.Open("/m/db", new KvOptions { FileSystem = fs, DisableAutoCompactions = true, BloomBitsPerKey = 10 });
        Assert.Equal(0, Prop(db, "rocksdb.estimate-table-readers-mem"));

        Fill(db, 0, 20_000);
        db.Flush();
        Assert.NotNull(db.Get("key0000042"u8)); // opens the reader
        long one = Prop(db, "rocksdb.estimate-table-readers-mem");
        // 20,000 keys at 10 bits each: a filter of at least 25,000 bytes, plus an index of ~600
        // data blocks (a few KiB); well under the table's 2+ MB of data blocks.
        Assert.True(one > 20_000 * 10 / 8 + 4096 && one < 200_000, $"one table: {one}");

        Fill(db, 20_000, 20_000);
        db.Flush();
        Assert.NotNull(db.Get("key0030000"u8));
        long two = Prop(db, "rocksdb.estimate-table-readers-mem");
        Assert.True(two > one + 20_000 * 10 / 8, $"one table {one}, two {two}");

        // Range tombstones held by the reader count too.
        db.DeleteRange("key0000100"u8, "key0000200"u8);
        db.Put("zz"u8, "v"u8);
        db.Flush();
        Assert.Null(db.Get("key0000150"u8));
        Assert.True(Prop(db, "rocksdb.estimate-table-readers-mem") > two, "a table of range tombstones adds to the estimate");

        // Compacting everything into fewer tables and evicting the old readers lowers it again.
        db.CompactRange(null, null);
        Assert.NotNull(db.Get("key0030000"u8));
        long compacted = Prop(db, "rocksdb.estimate-table-readers-mem");
        Assert.True(compacted > 0 && compacted < two + 10_000, $"compacted {compacted}, before {two}");
    }

    [Fact]
    public void TableReadersMemoryLeavesCachedMetadataToTheBlockCache()
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/c");
        using var cache = new KvBlockCache(8 << 20);
        using var db = KvDb.Open("/c/db", new KvOptions
        {
            FileSystem = fs, DisableAutoCompactions = true, BlockCache = cache, CacheIndexAndFilterBlocks = true, PinL0FilterAndIndexBlocksInCache = true,
        });
        Fill(db, 0, 20_000);
        db.Flush();
        Assert.NotNull(db.Get("key0000042"u8));
        Assert.Equal(0, Prop(db, "rocksdb.estimate-table-readers-mem"));
        long pinned = Prop(db, "rocksdb.block-cache-pinned-usage");
        Assert.True(pinned > 20_000 * 10 / 8, $"pinned index and filter: {pinned}");
        Assert.True(Prop(db, "rocksdb.block-cache-usage") >= pinned);
    }

    [Fact]
    public void MemTableSizesCountActiveAndImmutableMemTables()
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/t");
        using var db = KvDb.Open("/t/db", new KvOptions { FileSystem = fs, DisableAutoCompactions = true });
        long empty = Prop(db, "rocksdb.cur-size-all-mem-tables");
        Fill(db, 0, 10_000);
        long active = Prop(db, "rocksdb.cur-size-active-mem-table");
        long all = Prop(db, "rocksdb.cur-size-all-mem-tables");
        Assert.True(active >= empty + 10_000 * 110, $"active {active}");
        Assert.Equal(active, all);
        Assert.Equal(all, Prop(db, "rocksdb.size-all-mem-tables"));
        db.Flush();
        Assert.True(Prop(db, "rocksdb.cur-size-all-mem-tables") < all, "a flushed memtable is no longer counted");
    }

    [Fact]
    public void SizeAllMemTablesCountsAFlushedMemTableAnIteratorStillPins()
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/p");
        using var db = KvDb.Open("/p/db", new KvOptions { FileSystem = fs, DisableAutoCompactions = true });
        Fill(db, 0, 10_000);
        long before = Prop(db, "rocksdb.cur-size-all-mem-tables");
        using (KvIterator it = db.NewIterator())
        {
            db.Flush();
            long current = Prop(db, "rocksdb.cur-size-all-mem-tables");
            long all = Prop(db, "rocksdb.size-all-mem-tables");
            Assert.True(current < before, $"the flushed memtable left the current ones: {current} vs {before}");
            Assert.True(all >= current + before - 4096, $"the pinned one still counts: all {all}, current {current}, flushed {before}");
            it.SeekToFirst();
            Assert.True(it.Valid);
        }
        Assert.Equal(Prop(db, "rocksdb.cur-size-all-mem-tables"), Prop(db, "rocksdb.size-all-mem-tables"));
    }

    [Fact]
    public async Task ARunningCompactionPinsNoMemTable()
    {
        // A compaction pins the version it was picked from, not the read state: a memtable flushed
        // while it runs is freed at once (it used to stay until the compaction ended).
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/r");
        using var filter = new BlockingFilter();
        using var db = KvDb.Open("/r/db", new KvOptions { FileSystem = fs, DisableAutoCompactions = true, CompactionFilter = filter, MaxBackgroundJobs = 4 });
        Fill(db, 0, 2_000);
        db.Flush();
        Fill(db, 1_000, 2_000);
        db.Flush();
        Task compaction = Task.Run(() => db.CompactRange(null, null));
        Assert.True(filter.Entered.Wait(TimeSpan.FromMinutes(1)), "the compaction reached the filter");
        try
        {
            Fill(db, 10_000, 10_000); // into the memtable that was mutable when the compaction was picked
            db.Flush();
            Assert.Equal(Prop(db, "rocksdb.cur-size-all-mem-tables"), Prop(db, "rocksdb.size-all-mem-tables"));
        }
        finally
        {
            filter.Release.Set();
        }
        await compaction;
        Assert.NotNull(db.Get("key0010042"u8));
    }

    /// <summary>Keeps everything; its first call signals <see cref="Entered"/> and waits for <see cref="Release"/>. Thread-safe.</summary>
    private sealed class BlockingFilter : KvCompactionFilter, IDisposable
    {
        public ManualResetEventSlim Entered { get; } = new();

        public ManualResetEventSlim Release { get; } = new();

        public override string Name => "BlockingFilter";

        public override KvCompactionFilterDecision FilterValue(int level, ReadOnlySpan<byte> key, ReadOnlySpan<byte> existingValue, IBufferWriter<byte> newValue)
        {
            Entered.Set();
            Release.Wait();
            return KvCompactionFilterDecision.Keep;
        }

        public void Dispose()
        {
            Entered.Dispose();
            Release.Dispose();
        }
    }
}
