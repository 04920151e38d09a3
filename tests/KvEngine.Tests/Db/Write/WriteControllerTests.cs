using KvEngine.Db;
using KvEngine.Db.Write;

namespace KvEngine.Tests.Db.Write;

/// <summary><see cref="WriteController"/> on a simulated clock: the long-run rate holds, credit carries over.</summary>
public class WriteControllerTests
{
    [Fact]
    public void WritesOverBudgetWaitSoTheRateHolds()
    {
        var c = new WriteController(1_000_000); // 1 MB/s: 1,000 bytes per refill millisecond
        long now = 10_000_000;
        // The first write refills one period of credit (1,000 bytes) and is over budget by 9,000 (9 ms more).
        Assert.Equal(TimeSpan.FromMicroseconds(10_000), c.GetDelay(10_000, now)); // until the refill after next
        // Asked again at once, the next write waits behind the first.
        Assert.Equal(TimeSpan.FromMicroseconds(20_000), c.GetDelay(10_000, now));
    }

    [Fact]
    public void CreditCoversSmallWritesWithoutWaiting()
    {
        var c = new WriteController(1_000_000);
        long now = 5_000_000;
        Assert.Equal(TimeSpan.FromMicroseconds(2_000), c.GetDelay(2_000, now)); // 1,000 of credit, 1,000 over: one more period
        now += 100_000; // 100 ms later: ~100,000 bytes of credit
        Assert.Equal(TimeSpan.Zero, c.GetDelay(50_000, now));
        Assert.Equal(TimeSpan.Zero, c.GetDelay(40_000, now));
        Assert.True(c.GetDelay(50_000, now) > TimeSpan.Zero);
    }

    [Fact]
    public void OverAWholeRunTheAdmittedBytesMatchTheRate()
    {
        var c = new WriteController(16L << 20);
        long now = 1;
        long bytes = 0;
        for (int i = 0; i < 10_000; i++)
        {
            now += (long)c.GetDelay(64 << 10, now).TotalMicroseconds;
            bytes += 64 << 10;
        }
        double rate = bytes / (now / 1_000_000.0);
        Assert.InRange(rate, (16L << 20) * 0.95, (16L << 20) * 1.05);
    }
}
