using KvEngine.Db.State;

namespace KvEngine.Tests.Db.State;

/// <summary>
/// The checked lock rules of <see cref="DbMutex"/>: on for the whole test run, AssertHeld throws
/// (naming the caller) on a thread that does not hold the mutex and passes on one that does;
/// AssertNotHeld the reverse; the scope releases the hold.
/// </summary>
public sealed class DbMutexTests
{
    [Fact]
    public void AssertionsAreOnForTheTestRun() => Assert.True(DbMutex.AssertionsEnabled);

    [Fact]
    public void AssertHeldThrowsWithoutTheMutexAndPassesWithIt()
    {
        var mutex = new DbMutex();
        InvalidOperationException e = Assert.Throws<InvalidOperationException>(() => mutex.AssertHeld());
        Assert.Contains(nameof(AssertHeldThrowsWithoutTheMutexAndPassesWithIt), e.Message, StringComparison.Ordinal);
        mutex.AssertNotHeld();
        using (mutex.Lock())
        {
            Assert.True(mutex.IsHeld);
            mutex.AssertHeld();
            Assert.Throws<InvalidOperationException>(() => mutex.AssertNotHeld());
        }
        Assert.False(mutex.IsHeld);
        Assert.Throws<InvalidOperationException>(() => mutex.AssertHeld());
    }

    [Fact]
    public void AnotherThreadsHoldDoesNotCount()
    {
        var mutex = new DbMutex();
        using var held = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        var holder = new Thread(() =>
        {
            using (mutex.Lock())
            {
                held.Set();
                release.Wait();
            }
        });
        holder.Start();
        held.Wait();
        try
        {
            Assert.Throws<InvalidOperationException>(() => mutex.AssertHeld());
        }
        finally
        {
            release.Set();
            holder.Join();
        }
    }

    [Fact]
    public void WaitAndPulseRefuseACallerWithoutTheMutex()
    {
        var mutex = new DbMutex();
        Assert.Throws<InvalidOperationException>(() => mutex.PulseAll());
        Assert.Throws<InvalidOperationException>(() => mutex.Wait(0));
        using (mutex.Lock())
        {
            mutex.PulseAll();
            Assert.False(mutex.Wait(0));
        }
    }
}
