using KvEngine.RateLimiting;

namespace KvEngine.Tests.RateLimiting;

/// <summary>
/// <see cref="KvRateLimiter"/> in simulated time (<see cref="SimulatedClock"/>): requests split
/// into single bursts and granted one refill apart, a rate change, cancellation, the totals, and
/// several threads sharing it.
/// </summary>
public sealed class KvRateLimiterTests
{
    private static readonly TimeSpan Period = TimeSpan.FromMilliseconds(100);

    [Fact]
    public void DefaultsAreRocksDbs()
    {
        var l = new KvRateLimiter(10 << 20);
        Assert.Equal(TimeSpan.FromMilliseconds(100), l.RefillPeriod);
        Assert.Equal(10, l.Fairness);
        Assert.Equal(10 << 20, l.BytesPerSecond);
        Assert.Equal((10 << 20) / 10, l.SingleBurstBytes);
        Assert.Equal(100, new KvRateLimiter(1, Period, 1000).Fairness);
    }

    [Fact]
    public void BadArgumentsAreRefused()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new KvRateLimiter(0));
        Assert.Throws<ArgumentOutOfRangeException>(() => new KvRateLimiter(-1));
        Assert.Throws<ArgumentOutOfRangeException>(() => new KvRateLimiter(1, TimeSpan.Zero));
        Assert.Throws<ArgumentOutOfRangeException>(() => new KvRateLimiter(1, Period, 0));
        var l = new KvRateLimiter(1000);
        Assert.Throws<ArgumentOutOfRangeException>(() => l.SetBytesPerSecond(0));
        Assert.Throws<ArgumentOutOfRangeException>(() => l.Request(-1, KvIOPriority.Low));
        Assert.Throws<ArgumentOutOfRangeException>(() => l.Request(1, (KvIOPriority)4));
        Assert.Throws<ArgumentOutOfRangeException>(() => l.GetTotalBytesThrough((KvIOPriority)(-1)));
    }

    [Fact]
    public void ARequestLargerThanTheBurstIsSplitAndTakesOnePeriodPerPiece()
    {
        var clock = new SimulatedClock();
        long start = clock.Now;
        var l = new KvRateLimiter(1000, Period, 10, clock); // 100 bytes per 100 ms
        l.Request(350, KvIOPriority.Low);
        Assert.Equal(4, l.GetTotalRequests(KvIOPriority.Low)); // 100 + 100 + 100 + 50
        Assert.Equal(350, l.GetTotalBytesThrough(KvIOPriority.Low));
        // The first piece at the refill due at once, then one piece per refill.
        Assert.Equal(300_000, clock.Now - start);
        l.Request(50, KvIOPriority.Low); // the 50 left of the last refill
        Assert.Equal(300_000, clock.Now - start);
        Assert.Equal(400, l.GetTotalBytesThrough());
        Assert.Equal(5, l.GetTotalRequests());
    }

    [Fact]
    public void SetBytesPerSecondTakesEffectAtTheNextRefill()
    {
        var clock = new SimulatedClock();
        long start = clock.Now;
        var l = new KvRateLimiter(1000, Period, 10, clock);
        l.Request(100, KvIOPriority.High);
        l.SetBytesPerSecond(10_000);
        Assert.Equal(1000, l.SingleBurstBytes);
        Assert.Equal(10_000, l.BytesPerSecond);
        l.Request(1000, KvIOPriority.High); // one refill later, in one piece
        Assert.Equal(100_000, clock.Now - start);
        Assert.Equal(2, l.GetTotalRequests(KvIOPriority.High));
        l.SetBytesPerSecond(500); // 50 per period
        l.Request(100, KvIOPriority.High);
        Assert.Equal(300_000, clock.Now - start);
        Assert.Equal(1200, l.GetTotalBytesThrough(KvIOPriority.High));
        Assert.Equal(0, l.GetTotalBytesThrough(KvIOPriority.Low));
    }

    [Fact]
    public void ACancelledRequestThrowsAndLeavesTheQueue()
    {
        var clock = new SimulatedClock();
        var l = new KvRateLimiter(1000, Period, 10, clock);
        l.Request(100, KvIOPriority.Low); // the budget is spent
        using var cts = new CancellationTokenSource();
        cts.Cancel();
        Assert.Throws<OperationCanceledException>(() => l.Request(10, KvIOPriority.Low, cts.Token));
        Assert.Equal(0, l.Queued(KvIOPriority.Low));
        Assert.Equal(100, l.GetTotalBytesThrough());
        l.Request(100, KvIOPriority.Low); // the limiter still works
        Assert.Equal(200, l.GetTotalBytesThrough());
    }

    [Fact]
    public async Task AWaitIsCancelledFromAnotherThread()
    {
        // Real time: one byte a second, so the second byte waits a second unless cancelled.
        var l = new KvRateLimiter(1, TimeSpan.FromSeconds(1));
        l.Request(1, KvIOPriority.High);
        using var cts = new CancellationTokenSource();
        Task waiting = Task.Run(() => l.Request(1000, KvIOPriority.High, cts.Token));
        Assert.True(SpinWait.SpinUntil(() => l.Queued(KvIOPriority.High) == 1, TimeSpan.FromMinutes(1)));
        cts.Cancel();
        Assert.Same(waiting, await Task.WhenAny(waiting, Task.Delay(TimeSpan.FromMinutes(1)))); // hang guard
        var e = await Assert.ThrowsAnyAsync<OperationCanceledException>(() => waiting);
        Assert.Equal(cts.Token, e.CancellationToken);
        Assert.Equal(0, l.Queued(KvIOPriority.High));
    }

    [Fact]
    public void ThreadsSharingALimiterAreGrantedNoMoreThanTheRate()
    {
        var clock = new SimulatedClock();
        long start = clock.Now;
        var l = new KvRateLimiter(10_000, Period, 10, clock); // 1000 per period
        var threads = new Thread[4];
        for (int i = 0; i < threads.Length; i++)
        {
            var pri = (KvIOPriority)(i % 4);
            threads[i] = new Thread(() =>
            {
                for (int j = 0; j < 50; j++)
                {
                    l.Request(700, pri);
                }
            });
            threads[i].Start();
        }
        foreach (Thread t in threads)
        {
            Assert.True(t.Join(TimeSpan.FromMinutes(2)), "hang guard");
        }
        long total = 4 * 50 * 700;
        Assert.Equal(total, l.GetTotalBytesThrough());
        // Refills come one period apart from the first one, due at once: the time simulated is at
        // least what the rate allows for the bytes granted.
        long refills = (clock.Now - start) / 100_000 + 1;
        Assert.True(refills * 1000 >= total, $"{total} bytes in {refills} refills");
        foreach (KvIOPriority p in new[] { KvIOPriority.Low, KvIOPriority.Mid, KvIOPriority.High, KvIOPriority.User })
        {
            Assert.Equal(50 * 700, l.GetTotalBytesThrough(p));
        }
    }
}
