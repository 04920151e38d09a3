using KvEngine.Util;

namespace KvEngine.Tests.Util;

/// <summary>
/// Objects freed on one thread and needed on another come back through the shared overflow
/// instead of being left to the GC (the reader whose blocks a background thread freed).
/// </summary>
public class ThreadLocalPoolTests
{
    private sealed class Item;

    [Fact]
    public void ObjectsSpilledByOneThreadAreRentedByAnother()
    {
        var items = new List<Item>();
        for (int i = 0; i < ThreadLocalPool<Item>.Capacity + 10; i++)
        {
            items.Add(new Item());
        }
        var spiller = new Thread(() =>
        {
            foreach (Item item in items)
            {
                ThreadLocalPool<Item>.Return(item); // the first Capacity stay on this thread, 10 spill
            }
        });
        spiller.Start();
        spiller.Join();

        var rented = new List<Item>();
        var renter = new Thread(() =>
        {
            while (ThreadLocalPool<Item>.TryRent() is { } item)
            {
                rented.Add(item);
            }
        });
        renter.Start();
        renter.Join();
        Assert.Equal(10, rented.Count);
        Assert.All(rented, r => Assert.Contains(r, items.Skip(ThreadLocalPool<Item>.Capacity)));
        Assert.Equal(10, rented.Distinct().Count());
    }

    [Fact]
    public void AThreadRentsItsOwnReturnsFirstAndTheOverflowIsBounded()
    {
        // On a fresh thread, with a type no other test pools: exact counts.
        int single = -1;
        int total = -1;
        var t = new Thread(() =>
        {
            ThreadLocalPool<Item2>.Return(new Item2());
            single = ThreadLocalPool<Item2>.TryRent() is null ? 0 : 1 + (ThreadLocalPool<Item2>.TryRent() is null ? 0 : 1);
            for (int i = 0; i < ThreadLocalPool<Item2>.Capacity + ThreadLocalPool<Item2>.SharedCapacity + 5; i++)
            {
                ThreadLocalPool<Item2>.Return(new Item2());
            }
            total = 0;
            while (ThreadLocalPool<Item2>.TryRent() is not null)
            {
                total++;
            }
        });
        t.Start();
        t.Join();
        Assert.Equal(1, single);
        Assert.Equal(ThreadLocalPool<Item2>.Capacity + ThreadLocalPool<Item2>.SharedCapacity, total);
    }

    private sealed class Item2;
}
