using KvEngine.RateLimiting;

namespace KvEngine.Tests.RateLimiting;

/// <summary>
/// The limiter's accounting (<see cref="TokenBucket"/>), driven refill by refill: the budget, the
/// priority order with its fairness turns, partial grants, a rate change and the totals.
/// </summary>
public sealed class TokenBucketTests
{
    private const long Period = 100_000; // µs

    [Fact]
    public void ARefillAddsRateTimesPeriodAndTheFirstIsDueAtOnce()
    {
        var b = new TokenBucket(1000, Period, 10, nowMicros: 5);
        Assert.Equal(100, b.RefillBytesPerPeriod);
        Assert.Equal(5, b.NextRefillMicros);
        Assert.False(b.TryGrant(1, KvIOPriority.Low)); // nothing before the first refill
        b.Refill(5);
        Assert.Equal(100, b.AvailableBytes);
        Assert.Equal(5 + Period, b.NextRefillMicros);
        Assert.Equal(1, TokenBucket.RefillBytes(1, Period)); // at least one byte, as RocksDB's
        Assert.Equal(long.MaxValue / 1_000_000, TokenBucket.RefillBytes(long.MaxValue / 2, Period));
    }

    [Fact]
    public void BytesGrantedNeverExceedTheBytesRefilled()
    {
        var b = new TokenBucket(1000, Period, 3, 0);
        var rng = new Random(7);
        var queued = new List<RateLimiterRequest>();
        long refilled = 0;
        long grantedImmediately = 0;
        for (int step = 0; step < 2000; step++)
        {
            var pri = (KvIOPriority)rng.Next(4);
            long bytes = rng.Next(1, (int)b.RefillBytesPerPeriod + 1);
            if (b.TryGrant(bytes, pri))
            {
                grantedImmediately += bytes;
            }
            else
            {
                var r = new RateLimiterRequest(bytes, pri);
                b.Enqueue(r);
                queued.Add(r);
            }
            if (step % 3 == 0)
            {
                // A refill adds a period's bytes only when less than that is left.
                refilled += b.AvailableBytes < b.RefillBytesPerPeriod ? b.RefillBytesPerPeriod : 0;
                b.Refill(step * Period);
            }
            long grantedFromQueue = 0;
            foreach (RateLimiterRequest r in queued)
            {
                grantedFromQueue += r.Bytes - r.Remaining;
            }
            long granted = grantedImmediately + grantedFromQueue;
            Assert.Equal(granted, b.TotalBytesThrough());
            Assert.True(granted <= refilled, $"step {step}: granted {granted} > refilled {refilled}");
            Assert.True(granted <= b.Refills * b.RefillBytesPerPeriod);
            Assert.Equal(refilled - granted, b.AvailableBytes);
        }
        Assert.True(b.TotalBytesThrough() > 0);
    }

    [Fact]
    public void HighPriorityIsServedBeforeLowAndUserBeforeBoth()
    {
        var b = new TokenBucket(1000, Period, 10, 0);
        var low = new RateLimiterRequest(100, KvIOPriority.Low);
        var high = new RateLimiterRequest(100, KvIOPriority.High);
        var user = new RateLimiterRequest(100, KvIOPriority.User);
        b.Enqueue(low); // first in, but lowest
        b.Enqueue(high);
        b.Enqueue(user);

        b.Refill(0);
        Assert.True(user.Granted);
        Assert.False(high.Granted);
        Assert.False(low.Granted);
        b.Refill(Period);
        Assert.True(high.Granted);
        Assert.False(low.Granted);
        b.Refill(2 * Period);
        Assert.True(low.Granted);
        Assert.False(b.AnyQueued());
    }

    [Fact]
    public void LowPriorityGetsEveryFairnessThRefillUnderContention()
    {
        const int fairness = 4;
        var b = new TokenBucket(1000, Period, fairness, 0);
        var lows = new Queue<RateLimiterRequest>();
        var highs = new Queue<RateLimiterRequest>();
        for (int i = 0; i < 100; i++)
        {
            lows.Enqueue(Queue(b, KvIOPriority.Low));
            highs.Enqueue(Queue(b, KvIOPriority.High));
        }
        var lowTurns = new List<int>();
        for (int refill = 1; refill <= 40; refill++)
        {
            b.Refill(refill * Period);
            // Each request is one whole refill: exactly one request is granted per refill.
            if (lows.Peek().Granted)
            {
                lows.Dequeue();
                lowTurns.Add(refill);
                Assert.False(highs.Peek().Granted);
            }
            else
            {
                Assert.True(highs.Dequeue().Granted);
            }
        }
        Assert.Equal([4, 8, 12, 16, 20, 24, 28, 32, 36, 40], lowTurns);
        Assert.Equal(10 * 100, b.BytesThrough(KvIOPriority.Low));
        Assert.Equal(30 * 100, b.BytesThrough(KvIOPriority.High));
    }

    [Fact]
    public void SetBytesPerSecondTakesEffectAtTheNextRefill()
    {
        var b = new TokenBucket(1000, Period, 10, 0);
        b.Refill(0);
        Assert.True(b.TryGrant(60, KvIOPriority.Low));
        b.SetBytesPerSecond(5000);
        Assert.Equal(40, b.AvailableBytes); // the budget left is not touched
        Assert.Equal(500, b.RefillBytesPerPeriod);
        b.Refill(Period);
        Assert.Equal(540, b.AvailableBytes);
        b.SetBytesPerSecond(100); // 10 per period: a refill adds nothing while 10 or more is left
        b.Refill(2 * Period);
        Assert.Equal(540, b.AvailableBytes);
    }

    [Fact]
    public void ARequestLargerThanAReducedRefillIsGrantedInPartsAndCountedAsGranted()
    {
        var b = new TokenBucket(1000, Period, 10, 0);
        var r = new RateLimiterRequest(100, KvIOPriority.High);
        b.Enqueue(r);
        b.SetBytesPerSecond(300); // 30 per period: less than the request
        var behind = new RateLimiterRequest(1, KvIOPriority.High);
        b.Enqueue(behind);
        b.Refill(0);
        Assert.Equal(70, r.Remaining);
        Assert.Equal(30, b.BytesThrough(KvIOPriority.High));
        Assert.False(behind.Granted); // FIFO within a priority
        b.Refill(Period);
        b.Refill(2 * Period);
        Assert.Equal(10, r.Remaining);
        b.Refill(3 * Period);
        Assert.True(r.Granted);
        Assert.True(behind.Granted);
        Assert.Equal(101, b.BytesThrough(KvIOPriority.High));
        Assert.Equal(19, b.AvailableBytes);
    }

    [Fact]
    public void TotalsAreKeptPerPriority()
    {
        var b = new TokenBucket(10_000, Period, 10, 0);
        b.Refill(0);
        Assert.True(b.TryGrant(100, KvIOPriority.Low));
        Assert.True(b.TryGrant(200, KvIOPriority.High));
        Assert.True(b.TryGrant(300, KvIOPriority.High));
        Assert.False(b.TryGrant(1000, KvIOPriority.Mid)); // counted as a request, granted nothing yet
        Assert.Equal(1, b.Requests(KvIOPriority.Low));
        Assert.Equal(2, b.Requests(KvIOPriority.High));
        Assert.Equal(1, b.Requests(KvIOPriority.Mid));
        Assert.Equal(0, b.Requests(KvIOPriority.User));
        Assert.Equal(4, b.TotalRequests());
        Assert.Equal(100, b.BytesThrough(KvIOPriority.Low));
        Assert.Equal(500, b.BytesThrough(KvIOPriority.High));
        Assert.Equal(0, b.BytesThrough(KvIOPriority.Mid));
        Assert.Equal(600, b.TotalBytesThrough());
    }

    [Fact]
    public void ARemovedRequestLeavesItsQueue()
    {
        var b = new TokenBucket(1000, Period, 10, 0);
        var gone = new RateLimiterRequest(100, KvIOPriority.High);
        var next = new RateLimiterRequest(100, KvIOPriority.High);
        b.Enqueue(gone);
        b.Enqueue(next);
        b.Remove(gone);
        b.Remove(gone); // twice is harmless
        Assert.Equal(1, b.Queued(KvIOPriority.High));
        b.Refill(0);
        Assert.True(next.Granted);
        Assert.False(gone.Granted);
    }

    private static RateLimiterRequest Queue(TokenBucket b, KvIOPriority priority)
    {
        var r = new RateLimiterRequest(b.RefillBytesPerPeriod, priority);
        b.Enqueue(r);
        return r;
    }
}
