using KvEngine.Tests.Db;

namespace KvEngine.Tests.RangeDel;

/// <summary>
/// Iterators skip a run of keys a newer range tombstone covers with a seek, instead of stepping
/// through it: the table's data blocks inside the run are never read (counted by the block-read
/// ticker with the cache not filled), forward and in reverse, with the tombstone in the memtable or
/// in a newer table.
/// </summary>
public sealed class RangeDelSkipTests
{
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void CoveredRunIsSkippedWithoutReadingItsBlocks(bool tombstoneInTable)
    {
        var fs = DbTestUtil.NewFs();
        var stats = new KvStatistics();
        KvOptions options = DbTestUtil.SmallOptions(fs, writeBufferSize: 8 << 20);
        options.Statistics = stats;
        options.DisableAutoCompactions = true;
        options.Compression = KvCompressionType.None;
        using KvDb db = KvDb.Open("/db", options);
        const int Keys = 20_000;
        var value = new byte[40];
        for (int i = 0; i < Keys; i++)
        {
            db.Put(DbTestUtil.B($"k{i:D6}"), value);
        }
        db.Flush(); // about 300 data blocks of 4 KiB
        db.DeleteRange(DbTestUtil.B("k000100"), DbTestUtil.B("k019900"));
        if (tombstoneInTable)
        {
            db.Flush();
        }
        var ro = new ReadOptions { FillCache = false };

        long before = stats.GetTickerCount(Ticker.BlockReads);
        var forward = new List<string>();
        using (KvIterator it = db.NewIterator(ro))
        {
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
                forward.Add(DbTestUtil.S(it.Key));
            }
        }
        long forwardReads = stats.GetTickerCount(Ticker.BlockReads) - before;

        before = stats.GetTickerCount(Ticker.BlockReads);
        var backward = new List<string>();
        using (KvIterator it = db.NewIterator(ro))
        {
            for (it.SeekToLast(); it.Valid; it.Prev())
            {
                backward.Add(DbTestUtil.S(it.Key));
            }
        }
        long backwardReads = stats.GetTickerCount(Ticker.BlockReads) - before;

        Assert.Equal(200, forward.Count);
        Assert.Equal("k000099", forward[99]);
        Assert.Equal("k019900", forward[100]);
        backward.Reverse();
        Assert.Equal(forward, backward);
        // Stepping through the run would read every one of its ~300 blocks.
        Assert.True(forwardReads < 20, $"forward scan read {forwardReads} blocks");
        Assert.True(backwardReads < 20, $"backward scan read {backwardReads} blocks");
    }
}
