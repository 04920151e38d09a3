using KvEngine.Storage;
using KvEngine.Table;
using KvEngine.Tests.Table;
using KvEngine.Util;

namespace KvEngine.Tests.Cache;

public class OpenFileLimiterTests
{
    [Fact]
    public void IdleFilesBeyondTheLimitAreClosedAndReopenedOnDemand()
    {
        var options = new TableOptions();
        var tables = new Dictionary<string, byte[]>();
        var entries = new Dictionary<string, List<Entry>>();
        int opens = 0;
        var limiter = new OpenFileLimiter(2, name =>
        {
            Interlocked.Increment(ref opens);
            return new MemoryRandomAccessFile(tables[name]);
        });
        var readers = new List<TableReader>();
        for (int t = 0; t < 6; t++)
        {
            string name = $"t{t}.sst";
            entries[name] = TableTestUtil.MakeEntries(200, seed: t);
            tables[name] = TableTestUtil.Build(options, entries[name]);
            readers.Add(TableReader.Open(new MemoryRandomAccessFile(tables[name]), tables[name].Length, options, name, limiter: limiter));
            Assert.True(limiter.OpenFiles <= 2);
        }
        var threads = new Thread[4];
        for (int i = 0; i < threads.Length; i++)
        {
            int seed = i;
            threads[i] = new Thread(() =>
            {
                var rnd = new Random(seed);
                using var value = new ByteBuffer();
                for (int n = 0; n < 300; n++)
                {
                    TableReader r = readers[rnd.Next(readers.Count)];
                    List<Entry> list = entries[r.FileName];
                    Entry e = list[rnd.Next(list.Count)];
                    value.Clear();
                    Assert.True(r.TryGet(Format.InternalKeys.UserKey(e.Key), Format.InternalKeys.MaxSequenceNumber, value, out _, true));
                }
            });
            threads[i].Start();
        }
        foreach (Thread t in threads)
        {
            t.Join();
        }
        Assert.True(limiter.OpenFiles <= 2, $"{limiter.OpenFiles} open");
        Assert.True(opens > 0);
        foreach (TableReader r in readers)
        {
            TableTestUtil.AssertSame(entries[r.FileName], TableTestUtil.ScanForward(r.NewIterator(true)));
            r.Dispose();
        }
        Assert.Equal(0, limiter.OpenFiles);
    }

    [Fact]
    public void DatabaseWithMaxOpenFilesReadsEveryTable()
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/m");
        var stats = new KvStatistics();
        using var cache = new KvBlockCache(64 << 10);
        var options = new KvOptions { FileSystem = fs, Statistics = stats, MaxOpenFiles = 20, DisableAutoCompactions = true, BlockCache = cache };
        using KvDb db = KvDb.Open("/m/db", options);
        for (int t = 0; t < 25; t++)
        {
            for (int i = 0; i < 50; i++)
            {
                db.Put(System.Text.Encoding.ASCII.GetBytes($"k{t:D3}{i:D3}"), System.Text.Encoding.ASCII.GetBytes($"v{t}.{i}"));
            }
            db.Flush();
        }
        var noFill = new ReadOptions { FillCache = false }; // every read goes to the file
        for (int round = 0; round < 2; round++)
        {
            for (int t = 0; t < 25; t++)
            {
                Assert.Equal($"v{t}.7", System.Text.Encoding.ASCII.GetString(db.Get(System.Text.Encoding.ASCII.GetBytes($"k{t:D3}007"), noFill)!));
            }
        }
        Assert.True(stats.GetTickerCount(Ticker.NoFileOpens) > 25, $"{stats.GetTickerCount(Ticker.NoFileOpens)} opens: idle files were closed and reopened");
    }
}
