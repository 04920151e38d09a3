using System.Globalization;

namespace KvEngine.Tests.Db;

/// <summary>
/// RocksDB's min_write_buffer_number_to_merge: immutable memtables wait until enough of them exist,
/// then go into one level-0 table together.
/// </summary>
public sealed class MinWriteBufferNumberToMergeTests
{
    /// <summary>A database whose immutable memtables wait until three of them exist.</summary>
    private static KvDb OpenMergingThree()
    {
        KvOptions options = DbTestUtil.SmallOptions(DbTestUtil.NewFs(), 16 << 10, maxWriteBufferNumber: 6);
        options.MinWriteBufferNumberToMerge = 3;
        return KvDb.Open("/db", options);
    }

    /// <summary>Puts 1000-byte values until two memtables wait; the number of puts.</summary>
    private static int PutUntilTwoWait(KvDb db)
    {
        var value = new byte[1000];
        int puts = 0;
        while (db.GetProperty("rocksdb.num-immutable-mem-table") != "2")
        {
            Assert.True(puts < 1000, "the memtable never switched twice");
            db.Put(DbTestUtil.B($"k{puts++:D5}"), value);
        }
        return puts;
    }

    [Fact]
    public void FlushWaitsForEnoughImmutableMemtablesUnlessForced()
    {
        using KvDb db = OpenMergingThree();
        int i = PutUntilTwoWait(db);
        // Two waiting memtables are fewer than three: no flush may have started.
        Assert.Equal("0", db.GetProperty("rocksdb.num-files-at-level0"));
        Assert.Equal("2", db.GetProperty("rocksdb.num-immutable-mem-table"));

        db.Flush(); // forced: every waiting memtable and the active one, merged into one table
        Assert.Equal("0", db.GetProperty("rocksdb.num-immutable-mem-table"));
        Assert.Equal("1", db.GetProperty("rocksdb.num-files-at-level0"));
        Assert.Equal(i, DbTestUtil.ReadAll(db).Count);
    }

    [Fact]
    public void WaitingMemtablesReportTheirEntriesAndDeletions()
    {
        using KvDb db = OpenMergingThree();
        for (int d = 0; d < 3; d++)
        {
            db.Delete(DbTestUtil.B($"gone{d}"));
        }
        int puts = PutUntilTwoWait(db);
        long waiting = long.Parse(db.GetProperty("rocksdb.num-entries-imm-mem-tables")!, CultureInfo.InvariantCulture);
        long active = long.Parse(db.GetProperty("rocksdb.num-entries-active-mem-table")!, CultureInfo.InvariantCulture);
        Assert.True(waiting > 0 && active > 0, $"waiting {waiting}, active {active}");
        Assert.Equal(puts + 3, waiting + active);
        Assert.Equal("3", db.GetProperty("rocksdb.num-deletes-imm-mem-tables")); // in the first memtable, now waiting

        db.Flush();
        Assert.Equal("0", db.GetProperty("rocksdb.num-entries-imm-mem-tables"));
        Assert.Equal("0", db.GetProperty("rocksdb.num-deletes-imm-mem-tables"));
    }

    [Fact]
    public void ValueAboveTheMemtableLimitIsCappedSoWritesNeverDeadlock()
    {
        var fs = DbTestUtil.NewFs();
        KvOptions options = DbTestUtil.SmallOptions(fs, 8 << 10, maxWriteBufferNumber: 3);
        options.MinWriteBufferNumberToMerge = 100; // RocksDB caps it at max_write_buffer_number - 1
        using KvDb db = KvDb.Open("/db", options);
        var value = new byte[500];
        for (int i = 0; i < 400; i++)
        {
            db.Put(DbTestUtil.B($"k{i:D5}"), value); // would stall forever without the cap
        }
        Assert.Equal(400, DbTestUtil.ReadAll(db).Count);
    }
}
