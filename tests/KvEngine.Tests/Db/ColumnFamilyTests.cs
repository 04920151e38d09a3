using System.Globalization;
using KvEngine.Db;
using KvEngine.Storage;
using KvEngine.Table;
using static KvEngine.Tests.Db.DbTestUtil;
using KvEngine.Versions;

namespace KvEngine.Tests.Db;

/// <summary>
/// Column families one behaviour at a time: drops under live iterators and snapshots, WAL
/// retention across families, per-family properties and options, the WAL-size trigger, an atomic
/// flush that loses a family midway, and the argument checks of open, create, drop and handles.
/// All on the in-memory fault-injection file system.
/// </summary>
public sealed class ColumnFamilyTests
{
    private static readonly WriteOptions s_sync = new() { Sync = true };

    private static KvOptions Options(FaultInjectionFileSystem fs) => new()
    {
        FileSystem = fs,
        CreateMissingColumnFamilies = true,
        WriteBufferSize = 1 << 20,
    };

    private static KvDb OpenFamilies(KvOptions options, params string[] names) =>
        KvDb.Open(DbPath, options, DbTestUtil.WithDefault(options, names.Select(n => new ColumnFamilyDescriptor(n, new ColumnFamilyOptions { WriteBufferSize = 1 << 20 }))));

    private static ColumnFamilyHandle H(KvDb db, string name) => db.GetColumnFamily(name) ?? throw new Xunit.Sdk.XunitException($"no family {name}");

    private static int Level0(KvDb db, ColumnFamilyHandle h) =>
        int.Parse(db.GetProperty(h, "rocksdb.num-files-at-level0")!, CultureInfo.InvariantCulture);

    private static long Property(KvDb db, ColumnFamilyHandle h, string name) =>
        long.Parse(db.GetProperty(h, name)!, CultureInfo.InvariantCulture);

    private static void Fill(KvDb db, ColumnFamilyHandle h, string prefix, int n, WriteOptions? wo = null)
    {
        for (int i = 0; i < n; i++)
        {
            db.Put(h, B($"{prefix}{i:D5}"), B($"{prefix}-value-{i}"), wo);
        }
    }

    private static SortedDictionary<string, string> ReadFamily(KvDb db, ColumnFamilyHandle h)
    {
        var result = new SortedDictionary<string, string>(StringComparer.Ordinal);
        using KvIterator it = db.NewIterator(h);
        for (it.SeekToFirst(); it.Valid; it.Next())
        {
            result.Add(S(it.Key), S(it.Value));
        }
        return result;
    }

    [Fact]
    public void DroppedFamilyStaysReadableThroughLiveIteratorAndItsFilesGoAfterDispose()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = OpenFamilies(Options(fs), "default", "a", "b");
        ColumnFamilyHandle a = H(db, "a");
        Fill(db, a, "t", 200);
        db.Flush(a); // one table
        Fill(db, a, "m", 100); // and a memtable
        Fill(db, H(db, "b"), "b", 10);
        db.Flush(H(db, "b"));
        List<string> tablesOfA = a.Data.Versions.Current.Files(0).Select(f => Path.GetFileName(FileNames.TableFile(DbPath, f.Number))).ToList();
        Assert.Single(tablesOfA);
        ulong tableOfA = a.Data.Versions.Current.Files(0)[0].Number;
        Snapshot snap = db.GetSnapshot();
        KvIterator it = db.NewIterator(a);
        it.SeekToFirst(); // positioned before the drop

        db.DropColumnFamily(a);

        Assert.True(a.IsDropped);
        // As RocksDB: the handle keeps serving reads of the family's last state until it is disposed.
        Assert.Equal("t-value-1", S(db.Get(a, B("t00001"))));
        Assert.Equal("m-value-99", S(db.Get(a, B("m00099"), new ReadOptions { Snapshot = snap })));
        using (KvIterator after = db.NewIterator(a))
        {
            after.SeekToLast();
            Assert.Equal("t00199", S(after.Key));
        }
        Assert.Throws<ArgumentException>(() => db.Put(a, B("x"), B("y")));
        Assert.Throws<ArgumentException>(() => db.Flush(a));
        Assert.Throws<ArgumentException>(() => db.CompactRange(a, null, null));
        Assert.Throws<ArgumentException>(() => db.GetProperty(a, "rocksdb.stats"));
        Assert.DoesNotContain("a", KvDb.ListColumnFamilies(DbPath, Options(fs)));
        // Work on other families (flushes sweep obsolete files) does not take the pinned table.
        Fill(db, H(db, "b"), "c", 10);
        db.Flush();
        Assert.Subset(ListFiles(fs, DbPath).Tables.ToHashSet(), tablesOfA.ToHashSet());

        int n = 0;
        for (; it.Valid; it.Next())
        {
            n++;
        }
        Assert.Equal(300, n); // the table and the memtable, all of it
        it.SeekToLast();
        Assert.Equal("t00199", S(it.Key));
        Assert.Equal("b-value-3", S(db.Get(H(db, "b"), B("b00003"), new ReadOptions { Snapshot = snap })));
        Assert.Null(db.Get(H(db, "b"), B("c00003"), new ReadOptions { Snapshot = snap }));
        snap.Dispose();
        it.Dispose();
        Assert.Contains(tableOfA, db.Impl.Versions.LiveTableNumbers()); // the handle still serves reads
        a.Dispose();
        Assert.Throws<ArgumentException>(() => db.Get(a, B("t00001")));
        Assert.Throws<ArgumentException>(() => db.NewIterator(a));
        Assert.DoesNotContain(tableOfA, db.Impl.Versions.LiveTableNumbers()); // nothing pins the dropped family's version
        Fill(db, H(db, "b"), "d", 10);
        db.Flush(); // a sweep
        Assert.Empty(ListFiles(fs, DbPath).Tables.Intersect(tablesOfA));
    }

    /// <summary>Writes 50 keys to each of a and b (one WAL), flushes only a, and returns that WAL: b's data keeps it.</summary>
    private static string WriteBothFlushA(FaultInjectionFileSystem fs, KvDb db, WriteOptions? wo)
    {
        Fill(db, H(db, "a"), "a", 50, wo);
        Fill(db, H(db, "b"), "b", 50, wo);
        string log = Assert.Single(ListFiles(fs, DbPath).Logs);
        db.Flush(H(db, "a"));
        Assert.Equal(1, Level0(db, H(db, "a")));
        Assert.Contains(log, ListFiles(fs, DbPath).Logs); // b's data is only there
        return log;
    }

    [Fact]
    public void WalIsKeptUntilEveryFamilyWithDataInItIsFlushed()
    {
        FaultInjectionFileSystem fs = NewFs();
        KvOptions options = Options(fs);
        KvDb db = OpenFamilies(options, "default", "a", "b");
        WriteBothFlushA(fs, db, s_sync);
        Abandon(fs, db, powerLoss: true);

        db = OpenFamilies(options, "default", "a", "b");
        try
        {
            Assert.Equal(50, ReadFamily(db, H(db, "a")).Count);
            Assert.Equal(50, ReadFamily(db, H(db, "b")).Count);
            Assert.Equal("b-value-7", S(db.Get(H(db, "b"), B("b00007"))));
        }
        finally
        {
            db.Dispose();
        }

        // Without a crash: the WAL goes once b is flushed too.
        fs = NewFs();
        options = Options(fs);
        using KvDb db2 = OpenFamilies(options, "default", "a", "b");
        string log = WriteBothFlushA(fs, db2, null);
        db2.Flush(H(db2, "b"));
        Assert.DoesNotContain(log, ListFiles(fs, DbPath).Logs);
        Assert.Equal(50, ReadFamily(db2, H(db2, "b")).Count);
    }

    [Fact]
    public void WalHeldOnlyByADroppedFamilyIsDeleted()
    {
        FaultInjectionFileSystem fs = NewFs();
        KvOptions options = Options(fs);
        KvDb db = OpenFamilies(options, "default", "a", "b");
        string log = WriteBothFlushA(fs, db, null);
        db.DropColumnFamily(H(db, "b"));
        Assert.DoesNotContain(log, ListFiles(fs, DbPath).Logs);
        db.Dispose();

        // The MANIFEST agrees: the reopen neither misses the WAL nor brings b back.
        using KvDb again = OpenFamilies(options, "default", "a");
        Assert.Equal(50, ReadFamily(again, H(again, "a")).Count);
        Assert.Equal(["default", "a"], KvDb.ListColumnFamilies(DbPath, options));
    }

    [Fact]
    public void PropertiesAreTheFamilysOwn()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = OpenFamilies(Options(fs), "default", "flushed", "buffered");
        ColumnFamilyHandle flushed = H(db, "flushed");
        ColumnFamilyHandle buffered = H(db, "buffered");
        for (int i = 0; i < 2; i++)
        {
            Fill(db, flushed, $"f{i}-", 100);
            db.Flush(flushed);
        }
        Fill(db, buffered, "b", 300);

        Assert.Equal(2, Level0(db, flushed));
        Assert.Equal(0, Level0(db, buffered));
        Assert.Equal(0, Level0(db, db.DefaultColumnFamily));
        long flushedMem = Property(db, flushed, "rocksdb.cur-size-active-mem-table");
        long bufferedMem = Property(db, buffered, "rocksdb.cur-size-active-mem-table");
        long defaultMem = Property(db, db.DefaultColumnFamily, "rocksdb.cur-size-active-mem-table");
        Assert.True(bufferedMem > flushedMem + 300 * 10, $"buffered {bufferedMem}, flushed {flushedMem}");
        Assert.Equal(defaultMem, flushedMem); // both empty
        Assert.Equal(300, Property(db, buffered, "rocksdb.num-entries-active-mem-table"));
        Assert.Equal(0, Property(db, flushed, "rocksdb.num-entries-active-mem-table"));

        string stats = db.GetProperty(flushed, "rocksdb.stats")!;
        Assert.Contains("** Compaction Stats [flushed] **", stats, StringComparison.Ordinal);
        Assert.Matches(@"\n\s*L0\s+2/0 ", stats);
        string bufferedStats = db.GetProperty(buffered, "rocksdb.stats")!;
        Assert.Contains("** Compaction Stats [buffered] **", bufferedStats, StringComparison.Ordinal);
        Assert.DoesNotMatch(@"\n\s*L0\s+[1-9]", bufferedStats);
    }

    [Fact]
    public void PerFamilyCompressionAndWriteBufferTakeEffect()
    {
        FaultInjectionFileSystem fs = NewFs();
        var options = new KvOptions { FileSystem = fs, CreateMissingColumnFamilies = true, Compression = KvCompressionType.Lz4 };
        using KvDb db = KvDb.Open(DbPath, options,
        [
            new ColumnFamilyDescriptor("default", options),
            new ColumnFamilyDescriptor("zstd", new ColumnFamilyOptions { Compression = KvCompressionType.Zstd, WriteBufferSize = 16 << 10, DisableAutoCompactions = true }),
            new ColumnFamilyDescriptor("plain", new ColumnFamilyOptions { Compression = KvCompressionType.None, WriteBufferSize = 4 << 20 }),
        ]);
        ColumnFamilyHandle zstd = H(db, "zstd");
        ColumnFamilyHandle plain = H(db, "plain");
        var value = new string('v', 200);
        for (int i = 0; i < 1000; i++)
        {
            db.Put(zstd, B($"k{i:D5}"), B(value));
            db.Put(plain, B($"k{i:D5}"), B(value));
        }
        // The same ~230 KB went to both: the small write buffer switched many times, the large one never.
        Assert.True(zstd.Data.Versions.Current.NumFiles(0) + Property(db, zstd, "rocksdb.num-immutable-mem-table") >= 5);
        Assert.Equal(0, Property(db, plain, "rocksdb.num-immutable-mem-table"));
        Assert.Equal(0, TotalTableFiles(db, plain));

        db.Flush();
        Assert.Equal("ZSTD", TableProperties(fs, zstd).CompressionName);
        Assert.Equal("zstd", TableProperties(fs, zstd).ColumnFamilyName);
        Assert.Equal("NoCompression", TableProperties(fs, plain).CompressionName);
        Assert.Equal((ulong)plain.Id, TableProperties(fs, plain).ColumnFamilyId);
        Fill(db, db.DefaultColumnFamily, "d", 100);
        db.Flush(db.DefaultColumnFamily);
        Assert.Equal("LZ4", TableProperties(fs, db.DefaultColumnFamily).CompressionName);
    }

    private static TableProperties TableProperties(FaultInjectionFileSystem fs, ColumnFamilyHandle h)
    {
        KvEngine.Versions.FileMetaData f = h.Data.Versions.Current.Files(0)[^1];
        string path = FileNames.TableFile(DbPath, f.Number);
        using TableReader reader = TableReader.Open(fs.OpenRandomAccess(path), (long)f.FileSize, new TableOptions(), path);
        return reader.Properties;
    }

    [Fact]
    public void MaxTotalWalSizeSwitchesASingleOversizedWal()
    {
        FaultInjectionFileSystem fs = NewFs();
        KvOptions options = Options(fs);
        options.MaxTotalWalSize = 32 << 10;
        using KvDb db = OpenFamilies(options, "default", "a", "b");
        Fill(db, H(db, "b"), "b", 5); // a rarely written family
        ColumnFamilyHandle a = H(db, "a");
        for (int i = 0; i < 200; i++)
        {
            db.Put(a, B($"a{i:D5}"), new byte[1000]); // 200 KB: far past the limit, far below the write buffer
        }
        Assert.True(Property(db, a, "rocksdb.num-immutable-mem-table") + TotalTableFiles(db, a) > 0,
            "the WAL passed MaxTotalWalSize but a's memtable was never switched");
        Assert.True(Property(db, H(db, "b"), "rocksdb.num-immutable-mem-table") + TotalTableFiles(db, H(db, "b")) > 0,
            "b kept the oldest WAL alive but was never switched");
    }

    [Fact]
    public void AtomicFlushKeepsTheOtherFamiliesWhenOneIsDroppedMidway()
    {
        FaultInjectionFileSystem fs = NewFs();
        KvOptions options = Options(fs);
        options.AtomicFlush = true;
        KvDb db = OpenFamilies(options, "default", "a", "b", "c");
        foreach (string name in new[] { "a", "b", "c" })
        {
            Fill(db, H(db, name), name, 100);
        }
        ColumnFamilyHandle c = H(db, "c");
        Exception? hookError = null;
        int armed = 1;
        // While the flush writes its first table, c is dropped (on the flush's own thread, so no
        // timing is involved): the atomic group can no longer name c.
        fs.ShouldFail = (op, path) =>
        {
            if (op == FileOperation.Create && path.EndsWith(".sst", StringComparison.Ordinal) && Interlocked.Exchange(ref armed, 0) == 1)
            {
                try
                {
                    db.DropColumnFamily(c);
                }
                catch (Exception e)
                {
                    hookError = e;
                }
            }
            return false;
        };
        db.Flush();
        fs.ShouldFail = null;
        Assert.Null(hookError);
        Assert.True(c.IsDropped);
        try
        {
            foreach (string name in new[] { "a", "b" })
            {
                ColumnFamilyHandle h = H(db, name);
                Assert.Equal(100, ReadFamily(db, h).Count);
                Assert.Equal(1, Level0(db, h));
            }
            db.Dispose();
            db = OpenFamilies(options, "default", "a", "b");
            Assert.Equal(100, ReadFamily(db, H(db, "a")).Count);
            Assert.Equal(100, ReadFamily(db, H(db, "b")).Count);
            Assert.Null(db.GetColumnFamily("c"));
        }
        finally
        {
            db.Dispose();
        }
    }

    [Fact]
    public void OpenRequiresEveryFamilyToBeNamed()
    {
        FaultInjectionFileSystem fs = NewFs();
        KvOptions options = Options(fs);
        OpenFamilies(options, "default", "a", "b").Dispose();
        Assert.Equal(["default", "a", "b"], KvDb.ListColumnFamilies(DbPath, options));

        Assert.Throws<ArgumentException>(() => OpenFamilies(options, "default", "a"));
        Assert.Throws<ArgumentException>(() => KvDb.Open(DbPath, options));
        Assert.Throws<ArgumentException>(() => OpenFamilies(options, "default", "a", "b", "a")); // named twice
        options.CreateMissingColumnFamilies = false;
        Assert.Throws<ArgumentException>(() => OpenFamilies(options, "default", "a", "b", "new"));
        Assert.Equal(["default", "a", "b"], KvDb.ListColumnFamilies(DbPath, options)); // nothing created by the failed opens
        options.CreateMissingColumnFamilies = true;
        using (KvDb db = OpenFamilies(options, "default", "a", "b", "new"))
        {
            Assert.Equal(["default", "a", "b", "new"], db.ColumnFamilies.Select(h => h.Name));
            Assert.Empty(ReadFamily(db, H(db, "new")));
        }
        Assert.Equal(["default", "a", "b", "new"], KvDb.ListColumnFamilies(DbPath, options));
    }

    [Fact]
    public void MisusedHandlesAndNamesAreRefused()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = OpenFamilies(Options(fs), "default", "a");
        FaultInjectionFileSystem otherFs = NewFs();
        using KvDb other = OpenFamilies(Options(otherFs), "default", "a");
        ColumnFamilyHandle foreign = H(other, "a");

        Assert.Throws<ArgumentException>(() => db.Get(foreign, B("k")));
        Assert.Throws<ArgumentException>(() => db.Put(foreign, B("k"), B("v")));
        Assert.Throws<ArgumentException>(() => db.NewIterator(foreign));
        Assert.Throws<ArgumentException>(() => db.Flush(foreign));
        Assert.Throws<ArgumentException>(() => db.DropColumnFamily(foreign));
        Assert.Throws<ArgumentException>(() => db.DropColumnFamily(other.DefaultColumnFamily));
        Assert.Null(db.Get(H(db, "a"), B("k")));

        Assert.Throws<ArgumentException>(() => db.CreateColumnFamily("a"));
        Assert.Throws<ArgumentException>(() => db.CreateColumnFamily("default"));
        Assert.Throws<ArgumentException>(() => db.DropColumnFamily(db.DefaultColumnFamily));

        ColumnFamilyHandle doomed = db.CreateColumnFamily("doomed");
        using var batch = new WriteBatch();
        batch.Put(H(db, "a"), B("k"), B("v"));
        batch.Put(doomed, B("k"), B("v"));
        db.DropColumnFamily(doomed);
        Assert.Throws<ArgumentException>(() => db.DropColumnFamily(doomed));
        Assert.Throws<ArgumentException>(() => db.Write(batch));
        Assert.Null(db.Get(H(db, "a"), B("k"))); // the batch is refused whole

        ColumnFamilyHandle again = db.CreateColumnFamily("doomed");
        Assert.NotEqual(doomed.Id, again.Id);
        Assert.Empty(ReadFamily(db, again));
    }
}
