using System.Buffers.Binary;
using KvEngine.Memtable;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Memtable;

/// <summary>
/// <see cref="MemTable.DistinctUserKeys"/>: counted at insert from the skip-list neighbour's user
/// key; exact for one writer, never low for several (a flush sizes its filter by it).
/// </summary>
public sealed class MemTableDistinctUserKeysTests
{
    private static void KeyOf(int k, Span<byte> user) => BinaryPrimitives.WriteInt32BigEndian(user, k);

    [Theory]
    [InlineData(1, 50)]
    [InlineData(2, 5_000)]
    [InlineData(3, 100_000)]
    public void OneWriterCountsEachUserKeyOnceWhateverItsVersionsAndTypes(int seed, int keySpace)
    {
        using var mem = new MemTable(new MemTableOptions(ArenaBlockSize: 256 << 10, RandomSeed: (ulong)seed));
        var rng = new Random(seed);
        var model = new HashSet<int>();
        Span<byte> user = stackalloc byte[4];
        Span<byte> end = stackalloc byte[4];
        ulong seq = 0;
        for (int i = 0; i < 30_000; i++)
        {
            int k = rng.Next(keySpace);
            KeyOf(k, user);
            ValueType type = rng.Next(10) switch { 0 => ValueType.Deletion, 1 => ValueType.Merge, 2 => ValueType.SingleDeletion, _ => ValueType.Value };
            Assert.True(mem.Add(++seq, type, user, type is ValueType.Deletion or ValueType.SingleDeletion ? [] : user));
            model.Add(k);
            if (rng.Next(100) == 0)
            {
                KeyOf(k + 10, end);
                Assert.True(mem.Add(++seq, ValueType.RangeDeletion, user, end)); // range tombstones are not user keys of the point table
            }
        }
        Assert.Equal(model.Count, mem.DistinctUserKeys);
        Assert.True(mem.DistinctUserKeys < mem.NumEntries);
    }

    [Fact]
    public void AnOlderVersionAddedAfterANewerOneNeverLowersTheCount()
    {
        // Versions out of sequence order (the newer one is then the predecessor): counted again,
        // high, which a filter sized by the count tolerates.
        using var mem = new MemTable();
        Span<byte> user = stackalloc byte[4];
        KeyOf(7, user);
        Assert.True(mem.Add(10, ValueType.Value, user, user));
        Assert.True(mem.Add(5, ValueType.Value, user, user));
        Assert.Equal(2, mem.DistinctUserKeys);
        Assert.True(mem.Add(11, ValueType.Value, user, user));
        Assert.Equal(2, mem.DistinctUserKeys);
        Assert.False(mem.Add(11, ValueType.Value, user, user)); // a duplicate is refused, not counted
        Assert.Equal(2, mem.DistinctUserKeys);
    }

    [Theory]
    [InlineData(4, 64)]
    [InlineData(4, 20_000)]
    public void ConcurrentWritersNeverCountFewerUserKeysThanThereAre(int writers, int keySpace)
    {
        using var mem = new MemTable(new MemTableOptions(ArenaBlockSize: 256 << 10));
        const int PerWriter = 20_000;
        long nextSeq = 0;
        int refused = 0;
        var seen = new bool[keySpace];
        using var start = new Barrier(writers);
        var threads = new Thread[writers];
        for (int t = 0; t < writers; t++)
        {
            int id = t;
            threads[t] = new Thread(() =>
            {
                var rng = new Random(id + 1);
                Span<byte> user = stackalloc byte[4];
                start.SignalAndWait();
                for (int i = 0; i < PerWriter; i++)
                {
                    int k = rng.Next(keySpace);
                    KeyOf(k, user);
                    if (!mem.Add((ulong)Interlocked.Increment(ref nextSeq), ValueType.Value, user, user, concurrent: true))
                    {
                        Interlocked.Increment(ref refused); // asserted on the test's thread
                    }
                    Volatile.Write(ref seen[k], true);
                }
            });
            threads[t].Start();
        }
        foreach (Thread t in threads)
        {
            t.Join();
        }
        mem.EndConcurrentWrites();
        Assert.Equal(0, refused);
        int distinct = 0;
        foreach (bool s in seen)
        {
            distinct += s ? 1 : 0;
        }
        Assert.InRange(mem.DistinctUserKeys, distinct, mem.NumEntries);
    }
}
