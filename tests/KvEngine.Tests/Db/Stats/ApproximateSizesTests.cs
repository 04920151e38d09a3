using System.Globalization;

using static KvEngine.Tests.Db.DbTestUtil;

namespace KvEngine.Tests.Db.Stats;

/// <summary>
/// GetApproximateSizes and GetApproximateMemTableStats against the real sizes of a sequential
/// fill, with plain and partitioned indexes; estimate-live-data-size.
/// </summary>
public sealed class ApproximateSizesTests
{
    private const int Keys = 20_000;
    private const int BlockSize = 4096;

    private static string Key(int i) => $"key{i:D6}";

    private static KeyRange Range(int from, int to) => new(B(Key(from)), B(Key(to)));

    private static long Property(KvDb db, string name) => long.Parse(db.GetProperty(name)!, CultureInfo.InvariantCulture);

    private static KvDb Fill(FaultInjectionFileSystemHolder holder, KvIndexType index, bool oneTable = false)
    {
        var options = new KvOptions
        {
            FileSystem = holder.Fs,
            Compression = KvCompressionType.None, // sizes proportional to the data
            BlockSize = BlockSize,
            IndexType = index,
            MetadataBlockSize = 512, // several index partitions
            WriteBufferSize = oneTable ? 16 << 20 : 512 << 10,
            TargetFileSizeBase = 256 << 10,
            DisableAutoCompactions = oneTable,
        };
        KvDb db = KvDb.Open(DbPath, options);
        for (int i = 0; i < Keys; i++)
        {
            db.Put(B(Key(i)), B(new string((char)('a' + (i % 26)), 100)));
        }
        db.Flush();
        if (!oneTable)
        {
            db.CompactRange(null, null);
        }
        return db;
    }

    internal sealed class FaultInjectionFileSystemHolder
    {
        public KvEngine.Storage.FaultInjectionFileSystem Fs { get; } = NewFs();
    }

    [Theory]
    [InlineData(KvIndexType.BinarySearch)]
    [InlineData(KvIndexType.TwoLevelIndexSearch)]
    public void HalfTheKeysTakeAboutHalfTheBytes(KvIndexType index)
    {
        using KvDb db = Fill(new FaultInjectionFileSystemHolder(), index);
        long total = Property(db, "rocksdb.total-sst-files-size");
        int files = TotalTableFiles(db);
        Assert.True(files > 1, "the fill should make several tables, so that whole and cut tables both count");
        long[] sizes = db.GetApproximateSizes([Range(0, Keys / 2), Range(Keys / 2, Keys), Range(0, Keys), Range(Keys / 4, Keys / 4 + Keys / 10)]);
        // Error sources: each table the range cuts is measured to a data block (under one block per
        // end), and tables counted whole bring their index, filter and properties along (a few
        // percent of a table of 100-byte values).
        long tolerance = (2L * BlockSize * files) + (total / 20);
        Assert.InRange(sizes[0], (total / 2) - tolerance, (total / 2) + tolerance);
        Assert.InRange(sizes[1], (total / 2) - tolerance, (total / 2) + tolerance);
        Assert.InRange(sizes[2], total - tolerance, total);
        Assert.InRange(sizes[3], (total / 10) - tolerance, (total / 10) + tolerance);
        Assert.InRange(sizes[0] + sizes[1], total - tolerance, total);
    }

    [Theory]
    [InlineData(KvIndexType.BinarySearch)]
    [InlineData(KvIndexType.TwoLevelIndexSearch)]
    public void InsideOneTableTheIndexPlacesKeysToABlock(KvIndexType index)
    {
        using KvDb db = Fill(new FaultInjectionFileSystemHolder(), index, oneTable: true);
        Assert.Equal(1, TotalTableFiles(db));
        long total = Property(db, "rocksdb.total-sst-files-size");
        // Both ranges are cut by the table: measured only through the index (data block offsets).
        long[] sizes = db.GetApproximateSizes([Range(0, Keys / 2), Range(Keys / 4, 3 * Keys / 4), Range(Keys / 2, Keys / 2 + 100)]);
        Assert.InRange(sizes[0] - sizes[1], -2L * BlockSize, 2L * BlockSize); // equal key counts, equal value sizes
        Assert.InRange(sizes[0], (total / 2) - (total / 20), total / 2); // the data blocks are most of the file
        long hundredKeys = 100L * (Key(0).Length + 8 + 100);
        Assert.InRange(sizes[2], hundredKeys - BlockSize, hundredKeys + (2L * BlockSize));
    }

    [Fact]
    public void EmptyOutsideAndReversedRanges()
    {
        using KvDb db = Fill(new FaultInjectionFileSystemHolder(), KvIndexType.BinarySearch);
        long[] sizes = db.GetApproximateSizes([Range(500, 500), new KeyRange(B("a"), B("b")), new KeyRange(B("z"), B("zz"))]);
        Assert.Equal(new long[] { 0, 0, 0 }, sizes);
        Assert.Throws<ArgumentException>(() => db.GetApproximateSizes([Range(10, 5)]));
        Assert.Throws<ArgumentException>(() => db.GetApproximateSizes([Range(0, 5)], SizeApproximationFlags.None));
        Assert.Throws<ArgumentException>(() => db.GetApproximateMemTableStats(Range(10, 5)));
    }

    [Fact]
    public void MemtablesCountWhenAskedPerFamily()
    {
        var holder = new FaultInjectionFileSystemHolder();
        using KvDb db = KvDb.Open(DbPath, new KvOptions { FileSystem = holder.Fs });
        ColumnFamilyHandle cf = db.CreateColumnFamily("cf");
        for (int i = 0; i < 1000; i++)
        {
            db.Put(cf, B(Key(i)), B("0123456789"));
        }
        KeyRange half = Range(0, 500);
        (long count, long size) = db.GetApproximateMemTableStats(cf, half);
        Assert.Equal(500, count);
        Assert.Equal(500L * (Key(0).Length + 8 + 10), size); // internal key (user key + 8-byte trailer) and value
        Assert.Equal((0L, 0L), db.GetApproximateMemTableStats(half)); // the default family is empty
        Assert.Equal(new long[] { 0 }, db.GetApproximateSizes(cf, [half]));
        Assert.Equal(new long[] { size }, db.GetApproximateSizes(cf, [half], SizeApproximationFlags.IncludeMemtables));
        db.Flush(cf);
        long files = db.GetApproximateSizes(cf, [half])[0];
        Assert.True(files > 0);
        Assert.Equal(new long[] { files }, db.GetApproximateSizes(cf, [half], SizeApproximationFlags.IncludeFiles | SizeApproximationFlags.IncludeMemtables));
    }

    [Fact]
    public void EstimateLiveDataSizeCountsOverwrittenRangesOnce()
    {
        var holder = new FaultInjectionFileSystemHolder();
        using KvDb db = KvDb.Open(DbPath, new KvOptions { FileSystem = holder.Fs, DisableAutoCompactions = true, Compression = KvCompressionType.None });
        for (int round = 0; round < 3; round++)
        {
            for (int i = 0; i < 2000; i++)
            {
                db.Put(B(Key(i)), B(new string('v', 100)));
            }
            db.Flush(); // three level-0 tables over the same keys
        }
        long total = Property(db, "rocksdb.total-sst-files-size");
        long live = Property(db, "rocksdb.estimate-live-data-size");
        Assert.True(live * 3 <= total + 3 && live * 3 >= total - 3 * BlockSize, $"live {live}, total {total}");
        db.CompactRange(null, null);
        Assert.Equal(Property(db, "rocksdb.total-sst-files-size"), Property(db, "rocksdb.estimate-live-data-size"));
    }
}
