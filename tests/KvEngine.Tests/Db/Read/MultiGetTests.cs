using System.Buffers;
using System.Text;
using KvEngine.Storage;

namespace KvEngine.Tests.Db.Read;

/// <summary>
/// MultiGet's sharing of reads (each data block, the filter and the index taken once per batch,
/// counted by the block cache tickers), its corner cases (empty batch, caller order, duplicates,
/// a snapshot, a dropped family, corruption failing the batch) and KeyMayExist's answers without I/O.
/// </summary>
public sealed class MultiGetTests
{
    private const int Keys = 2000;

    private static byte[] Key(int i) => Encoding.ASCII.GetBytes($"k{i:D5}");

    private static byte[] Value(int i)
    {
        byte[] v = new byte[100];
        v.AsSpan().Fill((byte)i);
        BitConverter.TryWriteBytes(v, i);
        return v;
    }

    private static KvOptions Options(IFileSystem fs, KvBlockCache cache, KvStatistics stats, bool partitioned) => new()
    {
        FileSystem = fs,
        BlockCache = cache,
        Statistics = stats,
        CacheIndexAndFilterBlocks = true,
        IndexType = partitioned ? KvIndexType.TwoLevelIndexSearch : KvIndexType.BinarySearch,
        PartitionFilters = partitioned,
        MetadataBlockSize = 512,
        DisableAutoCompactions = true,
    };

    private static FaultInjectionFileSystem BuildCompacted()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        using var cache = new KvBlockCache(8 << 20);
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, Options(fs, cache, new KvStatistics(), partitioned: false));
        for (int i = 0; i < Keys; i++)
        {
            db.Put(Key(i), Value(i));
        }
        db.Flush();
        db.CompactRange(null, null);
        return fs;
    }

    private readonly record struct Accesses(long DataHits, long DataMisses, long Index, long Filter)
    {
        public static Accesses Of(KvStatistics s) => new(
            s.GetTickerCount(Ticker.BlockCacheDataHit), s.GetTickerCount(Ticker.BlockCacheDataMiss),
            s.GetTickerCount(Ticker.BlockCacheIndexHit) + s.GetTickerCount(Ticker.BlockCacheIndexMiss),
            s.GetTickerCount(Ticker.BlockCacheFilterHit) + s.GetTickerCount(Ticker.BlockCacheFilterMiss));

        public static Accesses operator -(Accesses a, Accesses b) => new(a.DataHits - b.DataHits, a.DataMisses - b.DataMisses, a.Index - b.Index, a.Filter - b.Filter);
    }

    // 32 keys spread over a few data blocks (every 7th key), in shuffled order.
    private static byte[][] SpreadKeys()
    {
        var keys = new byte[32][];
        for (int j = 0; j < keys.Length; j++)
        {
            keys[j] = Key(100 + (7 * j));
        }
        new Random(5).Shuffle(keys);
        return keys;
    }

    // Opens the compacted database with a cold cache, opens the table with a lookup far from the
    // keys, and returns the block accesses of `lookups` alone.
    private static Accesses Measure(FaultInjectionFileSystem fs, bool partitioned, Action<KvDb> lookups)
    {
        var stats = new KvStatistics();
        using var cache = new KvBlockCache(8 << 20);
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, Options(fs, cache, stats, partitioned));
        Assert.NotNull(db.Get(Key(Keys - 1)));
        Accesses before = Accesses.Of(stats);
        lookups(db);
        return Accesses.Of(stats) - before;
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void EachDataBlockIsReadOnceForTheKeysItHolds(bool partitioned)
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        {
            using var cache = new KvBlockCache(8 << 20);
            using KvDb db = KvDb.Open(DbTestUtil.DbPath, Options(fs, cache, new KvStatistics(), partitioned));
            for (int i = 0; i < Keys; i++)
            {
                db.Put(Key(i), Value(i));
            }
            db.Flush();
            db.CompactRange(null, null);
        }
        byte[][] keys = SpreadKeys();
        Accesses gets = Measure(fs, partitioned, db =>
        {
            foreach (byte[] k in keys)
            {
                Assert.NotNull(db.Get(k));
            }
        });
        byte[]?[] values = [];
        Accesses multi = Measure(fs, partitioned, db => values = db.MultiGet(keys));
        for (int j = 0; j < keys.Length; j++)
        {
            Assert.Equal(Value(int.Parse(Encoding.ASCII.GetString(keys[j], 1, 5), System.Globalization.CultureInfo.InvariantCulture)), values[j]);
        }
        Assert.Equal(keys.Length, gets.DataHits + gets.DataMisses); // one data block access per Get
        Assert.InRange(gets.DataMisses, 3, 16); // the keys span several blocks
        Assert.Equal(gets.DataMisses, multi.DataMisses); // the same blocks, each read from disk once
        Assert.Equal(0, multi.DataHits); // and never taken a second time
        Assert.True(multi.Index < gets.Index, $"index accesses: MultiGet {multi.Index}, Gets {gets.Index}");
        Assert.True(multi.Filter < gets.Filter, $"filter accesses: MultiGet {multi.Filter}, Gets {gets.Filter}");
        if (!partitioned)
        {
            Assert.Equal(1, multi.Index);
            Assert.Equal(1, multi.Filter);
        }
    }

    [Fact]
    public void ResultsFollowTheCallersOrderWithDuplicatesAbsentKeysAndASnapshot()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, DbTestUtil.SmallOptions(fs));
        db.Put(DbTestUtil.B("b"), DbTestUtil.B("1"));
        db.Put(DbTestUtil.B("a"), DbTestUtil.B("2"));
        db.Flush();
        db.Put(DbTestUtil.B("c"), DbTestUtil.B(""));
        using Snapshot snap = db.GetSnapshot();
        db.Put(DbTestUtil.B("a"), DbTestUtil.B("3"));
        db.Delete(DbTestUtil.B("b"));
        using var results = new MultiGetResults();
        ReadOnlyMemory<byte>[] keys = [DbTestUtil.B("c"), DbTestUtil.B("b"), DbTestUtil.B("zz"), DbTestUtil.B("a"), DbTestUtil.B("b"), DbTestUtil.B("a")];
        db.MultiGet(keys, results);
        Assert.Equal(6, results.Count);
        Assert.True(results.TryGetValue(0, out ReadOnlySpan<byte> empty) && empty.IsEmpty); // an empty value is found
        Assert.False(results.IsFound(1));
        Assert.False(results.TryGetValue(2, out _));
        Assert.Equal("3", DbTestUtil.S(results.ToArray(3)));
        Assert.False(results.IsFound(4));
        Assert.Equal("3", DbTestUtil.S(results.ToArray(5)));
        db.MultiGet(keys, results, new ReadOptions { Snapshot = snap });
        Assert.Equal(["", "1", null, "2", "1", "2"], Enumerable.Range(0, 6).Select(i => results.ToArray(i) is byte[] v ? DbTestUtil.S(v) : null));
        db.MultiGet(ReadOnlySpan<ReadOnlyMemory<byte>>.Empty, results);
        Assert.Equal(0, results.Count);
        Assert.Throws<ArgumentOutOfRangeException>(() => results.IsFound(0));
        Assert.Empty(db.MultiGet(Array.Empty<byte[]>()));
        Assert.Throws<ArgumentNullException>(() => db.MultiGet(keys, null!));
        Assert.Throws<ArgumentException>(() => db.MultiGet([DbTestUtil.B("a"), null!]));
    }

    // Without a filter nothing spares a table lookup: an absent key between a block's last key and
    // its (shortened) separator is sought in that block, found past its end and walked on to the next
    // block, as Get does. Batches wider than the table lookup's window (32 keys) go window by window;
    // versions of one key kept by snapshots spread over several tiny blocks.
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void MatchesGetAcrossWindowsBlockEndsAndVersionsSpanningBlocks(bool partitioned)
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        var options = new KvOptions
        {
            FileSystem = fs,
            BloomBitsPerKey = 0,
            BlockSize = 256,
            IndexType = partitioned ? KvIndexType.TwoLevelIndexSearch : KvIndexType.BinarySearch,
            MetadataBlockSize = 256,
            DisableAutoCompactions = true,
        };
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, options);
        for (int i = 0; i < 400; i += 2)
        {
            db.Put(Key(i), Value(i));
        }
        var snapshots = new List<Snapshot>();
        for (int version = 0; version < 12; version++)
        {
            snapshots.Add(db.GetSnapshot());
            db.Put(Key(201), Value(1000 + version)); // 12 versions of one key, over several 256-byte blocks
        }
        db.Flush();
        ReadOnlyMemory<byte>[] keys = Enumerable.Range(150, 100).Select(i => (ReadOnlyMemory<byte>)Key(i)).ToArray();
        new Random(9).Shuffle(keys);
        using var results = new MultiGetResults();
        foreach (ReadOptions read in snapshots.Select(s => new ReadOptions { Snapshot = s }).Prepend(ReadOptions.Default))
        {
            db.MultiGet(keys, results, read);
            for (int j = 0; j < keys.Length; j++)
            {
                byte[]? expected = db.Get(keys[j].Span, read);
                Assert.Equal(expected, results.ToArray(j));
            }
        }
        Assert.Equal(Value(1011), db.Get(Key(201)));
        Assert.Null(db.Get(Key(201), new ReadOptions { Snapshot = snapshots[0] }));
        Assert.Equal(Value(1004), db.Get(Key(201), new ReadOptions { Snapshot = snapshots[5] }));
        snapshots.ForEach(s => s.Dispose());
    }

    [Fact]
    public void PerFamilyAndDroppedFamily()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, DbTestUtil.SmallOptions(fs));
        ColumnFamilyHandle cf = db.CreateColumnFamily("other");
        db.Put(DbTestUtil.B("k"), DbTestUtil.B("default"));
        db.Put(cf, DbTestUtil.B("k"), DbTestUtil.B("other"));
        db.Flush(cf);
        Assert.Equal("default", DbTestUtil.S(db.MultiGet([DbTestUtil.B("k")])[0]));
        Assert.Equal("other", DbTestUtil.S(db.MultiGet(cf, [DbTestUtil.B("k")])[0]));
        Assert.True(db.KeyMayExist(cf, DbTestUtil.B("k"), null, out _));
        db.DropColumnFamily(cf);
        // RocksDB serves reads through a dropped family's handle until the handle is destroyed.
        Assert.Equal("other", DbTestUtil.S(db.MultiGet(cf, [DbTestUtil.B("k")])[0]));
        Assert.True(db.KeyMayExist(cf, DbTestUtil.B("k"), null, out _));
        cf.Dispose();
        Assert.Throws<ArgumentException>(() => db.MultiGet(cf, [DbTestUtil.B("k")]));
        Assert.Throws<ArgumentException>(() => db.KeyMayExist(cf, DbTestUtil.B("k"), null, out _));
    }

    [Fact]
    public void CorruptDataBlockFailsTheBatch()
    {
        FaultInjectionFileSystem fs = BuildCompacted();
        string table = fs.GetChildren(DbTestUtil.DbPath).Single(n => n.EndsWith(".sst", StringComparison.Ordinal));
        string path = Path.Combine(DbTestUtil.DbPath, table);
        byte[] bytes = fs.ReadAllBytes(path);
        bytes[100] ^= 0x40; // inside the first data block
        fs.WriteAllBytes(path, bytes);
        using var cache = new KvBlockCache(1 << 20);
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, Options(fs, cache, new KvStatistics(), partitioned: false));
        Assert.Throws<KvCorruptionException>(() => db.MultiGet([Key(Keys - 1), Key(0)]));
        Assert.NotNull(db.MultiGet([Key(Keys - 1)])[0]); // other blocks still read
    }

    [Fact]
    public void KeyMayExistIsFalseForMostAbsentKeysAndDoesNoIo()
    {
        FaultInjectionFileSystem fs = BuildCompacted();
        var stats = new KvStatistics();
        using var cache = new KvBlockCache(8 << 20);
        KvOptions options = Options(fs, cache, stats, partitioned: false);
        options.MaxOpenFiles = 100; // readers open on first use (with -1 the open loads them all)
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, options);
        db.Put(Key(5), DbTestUtil.B("mem"));
        db.Delete(Key(6));

        // Nothing cached and the table not open: only the memtable can answer.
        long reads = stats.GetTickerCount(Ticker.BlockReads);
        Assert.True(db.KeyMayExist(DbTestUtil.B("k00010x"))); // absent, but only the unread filter could tell
        Assert.False(db.KeyMayExist(Key(Keys + 1))); // past every table's range
        var value = new ArrayBufferWriter<byte>();
        Assert.True(db.KeyMayExist(Key(5), value, out bool found));
        Assert.True(found);
        Assert.Equal("mem", DbTestUtil.S(value.WrittenSpan));
        Assert.False(db.KeyMayExist(Key(6), value, out found));
        Assert.False(found);
        Assert.Equal(reads, stats.GetTickerCount(Ticker.BlockReads));

        // A Get opens the table and caches its filter: absent keys are now mostly refuted, present ones never.
        Assert.NotNull(db.Get(Key(10)));
        reads = stats.GetTickerCount(Ticker.BlockReads);
        int refuted = 0;
        for (int i = 0; i < 1000; i++)
        {
            Assert.Equal(i != 6, db.KeyMayExist(Key(i), null, out found)); // key 6 is deleted in the memtable
            Assert.Equal(i == 5, found);
            refuted += db.KeyMayExist(Encoding.ASCII.GetBytes($"absent{i}")) ? 0 : 1;
        }
        Assert.True(refuted > 950, $"only {refuted} of 1000 absent keys refuted");
        Assert.Equal(reads, stats.GetTickerCount(Ticker.BlockReads)); // no I/O
    }

    [Fact]
    public void KeyMayExistHonoursRangeDeletionsAndSnapshots()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, DbTestUtil.SmallOptions(fs));
        db.Put(DbTestUtil.B("a"), DbTestUtil.B("1"));
        using Snapshot snap = db.GetSnapshot();
        db.DeleteRange(DbTestUtil.B("a"), DbTestUtil.B("b"));
        Assert.False(db.KeyMayExist(DbTestUtil.B("a")));
        Assert.True(db.KeyMayExist(DbTestUtil.B("a"), new ReadOptions { Snapshot = snap }));
        db.Flush();
        Assert.Null(db.Get(DbTestUtil.B("a"))); // opens the table: KeyMayExist never does
        Assert.True(db.KeyMayExist(DbTestUtil.B("a"), new ReadOptions { Snapshot = snap }));
        Assert.True(db.KeyMayExist(DbTestUtil.B("a"))); // the table holds the key's entry (kept for the snapshot): its filter matches

        snap.Dispose();
        db.Put(DbTestUtil.B("c"), DbTestUtil.B("1"));
        db.Flush();
        db.DeleteRange(DbTestUtil.B("c"), DbTestUtil.B("d"));
        db.Put(DbTestUtil.B("e"), DbTestUtil.B("1"));
        db.Flush();
        Assert.Null(db.Get(DbTestUtil.B("c")));
        Assert.False(db.KeyMayExist(DbTestUtil.B("c"))); // the newer table's filter refutes it and its tombstone covers the older table
    }
}
