using KvEngine.Storage;
using KvEngine.Tests.Db;

namespace KvEngine.Tests.RateLimiting;

/// <summary>
/// Flushes and compactions charge their table files to <see cref="KvOptions.RateLimiter"/>, byte
/// for byte and at their priorities, and a database closing while its job waits for the limiter
/// returns promptly.
/// </summary>
public sealed class RateLimitedJobTests
{
    [Fact]
    public void FlushAndCompactionChargeExactlyTheTablesTheyWrite()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        // Simulated time, and a burst (1000 bytes) smaller than a data block: writes are split.
        var clock = new SimulatedClock();
        var limiter = new KvRateLimiter(10_000, TimeSpan.FromMilliseconds(100), 10, clock);
        KvOptions options = DbTestUtil.SmallOptions(fs, writeBufferSize: 1 << 20);
        options.RateLimiter = limiter;
        options.DisableAutoCompactions = true;
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, options);

        var tables = new HashSet<string>(StringComparer.Ordinal);
        long flushed = 0;
        for (int round = 0; round < 2; round++)
        {
            for (int i = 0; i < 2000; i++)
            {
                db.Put(DbTestUtil.B($"key{i:D6}"), DbTestUtil.B($"value {round} {i} {new string('v', 40)}"));
            }
            db.Flush();
            foreach (string t in NewTables(fs, tables))
            {
                flushed += fs.GetFileSize(t);
            }
            Assert.Equal(flushed, limiter.GetTotalBytesThrough(KvIOPriority.High));
        }
        Assert.Equal(2, tables.Count);
        Assert.Equal(0, limiter.GetTotalBytesThrough(KvIOPriority.Low));
        Assert.True(limiter.GetTotalRequests(KvIOPriority.High) >= flushed / limiter.SingleBurstBytes);

        db.CompactRange(null, null);
        long compacted = 0;
        foreach (string t in NewTables(fs, tables))
        {
            compacted += fs.GetFileSize(t);
        }
        Assert.True(compacted > 0);
        Assert.Equal(compacted, limiter.GetTotalBytesThrough(KvIOPriority.Low));
        Assert.Equal(flushed, limiter.GetTotalBytesThrough(KvIOPriority.High));
        Assert.Equal(flushed + compacted, limiter.GetTotalBytesThrough());
        Assert.Equal(DbTestUtil.B($"value 1 7 {new string('v', 40)}"), db.Get(DbTestUtil.B("key000007")));
    }

    [Fact]
    public async Task DisposeReturnsWhileAFlushWaitsForTheLimiter()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        var limiter = new KvRateLimiter(1, TimeSpan.FromSeconds(1)); // one byte a second
        KvOptions options = DbTestUtil.SmallOptions(fs, writeBufferSize: 64 << 10, maxWriteBufferNumber: 4);
        options.RateLimiter = limiter;
        KvDb db = KvDb.Open(DbTestUtil.DbPath, options);
        // Fill the memtable until it is switched: its flush starts and blocks on the limiter.
        int i = 0;
        while (db.GetProperty("rocksdb.num-immutable-mem-table") == "0")
        {
            db.Put(DbTestUtil.B($"key{i:D6}"), DbTestUtil.B(new string('v', 100)));
            i++;
            Assert.True(i < 100_000, "the memtable was never switched");
        }
        Assert.True(SpinWait.SpinUntil(() => limiter.Queued(KvIOPriority.High) > 0, TimeSpan.FromMinutes(1)), "the flush never waited for the limiter");

        Task closing = Task.Run(db.Dispose);
        Assert.Same(closing, await Task.WhenAny(closing, Task.Delay(TimeSpan.FromMinutes(2)))); // hang guard
        await closing;
        Assert.Equal(0, limiter.Queued(KvIOPriority.High));

        // Every acknowledged write is still there (replayed from the WAL).
        using KvDb again = KvDb.Open(DbTestUtil.DbPath, DbTestUtil.SmallOptions(fs, writeBufferSize: 64 << 20));
        for (int k = 0; k < i; k++)
        {
            Assert.NotNull(again.Get(DbTestUtil.B($"key{k:D6}")));
        }
    }

    private static List<string> NewTables(IFileSystem fs, HashSet<string> seen)
    {
        var added = new List<string>();
        var live = new HashSet<string>(StringComparer.Ordinal);
        foreach (string name in fs.GetChildren(DbTestUtil.DbPath))
        {
            if (name.EndsWith(".sst", StringComparison.Ordinal))
            {
                string path = DbTestUtil.DbPath + "/" + name;
                live.Add(path);
                if (seen.Add(path))
                {
                    added.Add(path);
                }
            }
        }
        seen.IntersectWith(live);
        return added;
    }
}
