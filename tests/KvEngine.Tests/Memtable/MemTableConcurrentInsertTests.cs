using System.Buffers.Binary;
using KvEngine.Format;
using KvEngine.Memtable;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Memtable;

/// <summary>
/// Several writers adding to one memtable at once (concurrent: true, allow_concurrent_memtable_write)
/// while a reader scans: every entry lands exactly once, in internal-key order, with its own value;
/// equal internal keys added from two threads go in once; and after
/// <see cref="MemTable.EndConcurrentWrites"/> the single-writer path (with its splice) still inserts
/// in order into gaps the other threads filled.
/// </summary>
public class MemTableConcurrentInsertTests
{
    private const int KeySpace = 1500;

    private static ulong ValueFor(ulong k, ulong seq) => (k * 0x9E3779B97F4A7C15UL) ^ (seq * 0xC2B2AE3D27D4EB4FUL);

    private static ulong KeyFor(ulong seq) => (seq * 0x2545F4914F6CDD1DUL >> 40) % KeySpace;

    [Theory]
    [InlineData(2, 40_000)]
    [InlineData(4, 20_000)]
    public void ConcurrentWritersAddEveryEntryOnceInOrder(int writers, int perWriter)
    {
        using var mem = new MemTable(new MemTableOptions(ArenaBlockSize: 64 << 10));
        var failures = new System.Collections.Concurrent.ConcurrentQueue<string>();
        int running = writers;
        using var start = new Barrier(writers + 1);
        var threads = new List<Thread>();
        for (int w = 0; w < writers; w++)
        {
            int id = w;
            threads.Add(new Thread(() =>
            {
                try
                {
                    start.SignalAndWait();
                    for (int i = 0; i < perWriter; i++)
                    {
                        // Writer id owns the sequences congruent to id + 1 modulo writers.
                        ulong seq = (ulong)(i * writers + id + 1);
                        if (!Add(mem, seq, concurrent: true))
                        {
                            failures.Enqueue($"writer {id}: {seq} refused");
                        }
                    }
                }
                catch (Exception e)
                {
                    failures.Enqueue($"writer {id}: {e}");
                }
                finally
                {
                    Interlocked.Decrement(ref running);
                }
            }));
        }
        int scans = 0;
        var reader = new Thread(() =>
        {
            try
            {
                start.SignalAndWait();
                while (Volatile.Read(ref running) > 0)
                {
                    ScanInOrder(mem);
                    scans++;
                }
            }
            catch (Exception e)
            {
                failures.Enqueue("reader: " + e);
            }
        });
        threads.Add(reader);
        threads.ForEach(t => t.Start());
        threads.ForEach(t => t.Join());
        mem.EndConcurrentWrites();

        Assert.Empty(failures);
        long total = (long)writers * perWriter;
        Assert.Equal(total, mem.NumEntries);
        Assert.Equal(1UL, mem.FirstSequence);
        Assert.Equal(total, ScanInOrder(mem));
        var latest = new ulong[KeySpace];
        for (ulong seq = 1; seq <= (ulong)total; seq++)
        {
            latest[KeyFor(seq)] = seq;
        }
        Span<byte> user = stackalloc byte[8];
        for (ulong k = 0; k < KeySpace; k++)
        {
            BinaryPrimitives.WriteUInt64BigEndian(user, k);
            bool found = mem.TryGet(user, ulong.MaxValue >> 8, out ValueType type, out ReadOnlySpan<byte> value);
            Assert.Equal(latest[k] != 0, found);
            if (found)
            {
                Assert.Equal(ValueType.Value, type);
                Assert.Equal(ValueFor(k, latest[k]), BinaryPrimitives.ReadUInt64LittleEndian(value));
            }
        }

        // The single writer again, after the concurrent phase: every new entry falls inside a gap
        // that holds other threads' nodes, which a stale splice would skip over.
        for (ulong seq = (ulong)total + 1; seq <= (ulong)total + 5000; seq++)
        {
            Assert.True(Add(mem, seq, concurrent: false));
        }
        Assert.Equal(total + 5000, ScanInOrder(mem));
    }

    [Fact]
    public void AnEntryAddedByTwoThreadsAtOnceGoesInOnce()
    {
        using var mem = new MemTable(new MemTableOptions(ArenaBlockSize: 64 << 10));
        const int Entries = 30_000;
        int accepted = 0;
        using var start = new Barrier(2);
        var threads = new Thread[2];
        for (int t = 0; t < 2; t++)
        {
            threads[t] = new Thread(() =>
            {
                start.SignalAndWait();
                for (ulong seq = 1; seq <= Entries; seq++)
                {
                    if (Add(mem, seq, concurrent: true))
                    {
                        Interlocked.Increment(ref accepted);
                    }
                }
            });
            threads[t].Start();
        }
        foreach (Thread t in threads)
        {
            t.Join();
        }
        mem.EndConcurrentWrites();
        Assert.Equal(Entries, accepted);
        Assert.Equal(Entries, mem.NumEntries);
        Assert.Equal(Entries, ScanInOrder(mem));
    }

    /// <summary>
    /// Each thread adds ascending keys, interleaved with the other's, so every thread's splice (its
    /// last insert's neighbours) keeps going stale under it: the fast path must notice.
    /// </summary>
    [Fact]
    public void InterleavedAscendingKeysFromSeveralThreadsStayInOrder()
    {
        using var mem = new MemTable(new MemTableOptions(ArenaBlockSize: 64 << 10));
        const int Threads = 3;
        const int PerThread = 40_000;
        using var start = new Barrier(Threads);
        var threads = new Thread[Threads];
        int refused = 0;
        for (int t = 0; t < Threads; t++)
        {
            int id = t;
            threads[t] = new Thread(() =>
            {
                Span<byte> user = stackalloc byte[8];
                start.SignalAndWait();
                for (int i = 0; i < PerThread; i++)
                {
                    ulong k = (ulong)(i * Threads + id);
                    BinaryPrimitives.WriteUInt64BigEndian(user, k);
                    if (!mem.Add(k + 1, ValueType.Value, user, user, concurrent: true))
                    {
                        Interlocked.Increment(ref refused);
                    }
                }
            });
            threads[t].Start();
        }
        foreach (Thread t in threads)
        {
            t.Join();
        }
        Assert.Equal(0, refused);
        using var it = mem.NewIterator();
        ulong expected = 0;
        for (it.SeekToFirst(); it.Valid; it.Next())
        {
            Assert.Equal(expected, BinaryPrimitives.ReadUInt64BigEndian(it.Key));
            Assert.Equal(expected + 1, InternalKeys.Sequence(it.Key));
            expected++;
        }
        Assert.Equal((ulong)(Threads * PerThread), expected);
    }

    private static bool Add(MemTable mem, ulong seq, bool concurrent)
    {
        Span<byte> user = stackalloc byte[8];
        Span<byte> value = stackalloc byte[8];
        ulong k = KeyFor(seq);
        BinaryPrimitives.WriteUInt64BigEndian(user, k);
        BinaryPrimitives.WriteUInt64LittleEndian(value, ValueFor(k, seq));
        return mem.Add(seq, ValueType.Value, user, value, concurrent);
    }

    /// <summary>Walks the table checking strict order and each value; returns the entry count.</summary>
    private static long ScanInOrder(MemTable mem)
    {
        using var it = mem.NewIterator();
        Span<byte> previous = stackalloc byte[16];
        long count = 0;
        for (it.SeekToFirst(); it.Valid; it.Next())
        {
            ReadOnlySpan<byte> key = it.Key;
            if (key.Length != 16 || it.Value.Length != 8)
            {
                throw new InvalidOperationException($"malformed entry at {count}");
            }
            ulong k = BinaryPrimitives.ReadUInt64BigEndian(key);
            ulong seq = InternalKeys.Sequence(key);
            if (BinaryPrimitives.ReadUInt64LittleEndian(it.Value) != ValueFor(k, seq) || KeyFor(seq) != k)
            {
                throw new InvalidOperationException($"entry {k}@{seq} has a foreign value");
            }
            if (count > 0 && InternalKeyComparer.Compare(previous, key) >= 0)
            {
                throw new InvalidOperationException($"out of order at {count}");
            }
            key.CopyTo(previous);
            count++;
        }
        return count;
    }
}
