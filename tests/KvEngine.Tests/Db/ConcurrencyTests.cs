using System.Diagnostics;
using System.Globalization;

namespace KvEngine.Tests.Db;

/// <summary>
/// Readers (point reads, iterators in both directions, snapshots) run against one writer and a
/// flusher for a bounded time. The writer writes w = 0, 1, 2, ... as key (w mod N) with round
/// (w div N), so the database after P writes is fully determined by P; every consistent view
/// (a snapshot, an iterator) must be exactly the view after some P between the writes acknowledged
/// before it was taken and one more (the write in flight), and every point read must return a
/// write at least as new as the last one acknowledged before it.
/// </summary>
public sealed class ConcurrencyTests
{
    private const int N = 2000;

    private long _acked;
    private volatile bool _stop;
    private Exception? _failure;

    [Fact]
    public void ReadersSeeAPrefixWhileWritesAndFlushesRun()
    {
        var fs = DbTestUtil.NewFs();
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, DbTestUtil.SmallOptions(fs, 64 << 10, 3));
        int flushes = 0;
        var counts = new int[3];
        var threads = new List<Thread>
        {
            Start("writer", () =>
            {
                for (long w = 0; !_stop; w++)
                {
                    int k = (int)(w % N);
                    db.Put(Key(k), Value(w / N, k));
                    Volatile.Write(ref _acked, w + 1);
                    if (w % 20 == 19)
                    {
                        // At most ~20k writes/s: without compaction every flush adds a level-0
                        // table that each scan merges, so an unthrottled writer starves the readers.
                        Thread.Sleep(1);
                    }
                }
            }),
            Start("flusher", () =>
            {
                while (!_stop)
                {
                    Thread.Sleep(50);
                    db.Flush();
                    flushes++;
                }
            }),
            Start("point reader", () =>
            {
                var rng = new Random(1);
                while (!_stop)
                {
                    PointRead(db, rng);
                    counts[0]++;
                }
            }),
            Start("snapshot reader", () =>
            {
                var rng = new Random(2);
                while (!_stop)
                {
                    SnapshotView(db, rng);
                    counts[1]++;
                }
            }),
            Start("iterator reader", () =>
            {
                while (!_stop)
                {
                    IteratorView(db);
                    counts[2]++;
                }
            }),
        };
        // Run until every thread has done its share (not for a fixed time, so a loaded machine
        // only makes the test slower); the bound is a hang guard.
        var sw = Stopwatch.StartNew();
        bool enough = false;
        while (!enough && sw.Elapsed < TimeSpan.FromMinutes(5) && Volatile.Read(ref _failure) == null)
        {
            Thread.Sleep(20);
            enough = Volatile.Read(ref _acked) > 2 * N && Volatile.Read(ref flushes) >= 3 &&
                Volatile.Read(ref counts[0]) > 100 && Volatile.Read(ref counts[1]) > 5 && Volatile.Read(ref counts[2]) > 5;
        }
        _stop = true;
        foreach (Thread t in threads)
        {
            Assert.True(t.Join(TimeSpan.FromSeconds(30)), $"{t.Name} did not stop");
        }
        if (_failure != null)
        {
            throw new InvalidOperationException("a thread failed", _failure);
        }
        Assert.True(Volatile.Read(ref _acked) > 2 * N, $"the writer made little progress ({_acked} writes)");
        Assert.True(flushes >= 3, $"only {flushes} flushes");
        Assert.True(counts[0] > 100 && counts[1] > 5 && counts[2] > 5, $"readers made little progress ({string.Join(", ", counts)})");
        Assert.NotEqual(0, DbTestUtil.TotalTableFiles(db));
        // The final state is the view after exactly every acknowledged write.
        CheckView(ReadView(db, null, forward: true), Volatile.Read(ref _acked), Volatile.Read(ref _acked), "final");
    }

    private Thread Start(string name, Action body)
    {
        var t = new Thread(() =>
        {
            try
            {
                body();
            }
            catch (Exception e)
            {
                Interlocked.CompareExchange(ref _failure, e, null);
                _stop = true;
            }
        })
        {
            IsBackground = true,
            Name = name,
        };
        t.Start();
        return t;
    }

    private void PointRead(KvDb db, Random rng)
    {
        long a = Volatile.Read(ref _acked);
        if (a == 0)
        {
            return;
        }
        long w = Math.Max(0, a - 2 * N) + rng.NextInt64(Math.Min(a, 2 * N));
        int k = (int)(w % N);
        long last = k + (a - 1 - k) / N * N; // the last acknowledged write of key k
        byte[]? v = db.Get(Key(k));
        long after = Volatile.Read(ref _acked);
        Assert.True(v != null, $"key {k} written by acknowledged write {last} is missing");
        (long round, int key) = Parse(v);
        Assert.Equal(k, key);
        long index = round * N + k;
        Assert.True(index >= last && index <= after, $"key {k}: read write {index}, expected [{last}, {after}]");
    }

    private void SnapshotView(KvDb db, Random rng)
    {
        long a0 = Volatile.Read(ref _acked);
        using Snapshot snap = db.GetSnapshot();
        long a1 = Volatile.Read(ref _acked);
        var ro = new ReadOptions { Snapshot = snap };
        long[] view = ReadView(db, ro, forward: true);
        long p = CheckView(view, a0, a1 + 1, "snapshot");
        // Point reads at the snapshot agree with it.
        for (int i = 0; i < 20; i++)
        {
            int k = rng.Next(N);
            byte[]? v = db.Get(Key(k), ro);
            Assert.Equal(view[k], v == null ? -1 : Parse(v).Round);
        }
        // The snapshot still reads the same after more writes and flushes, backwards too.
        Thread.Sleep(2);
        long[] again = ReadView(db, ro, forward: false);
        Assert.True(view.AsSpan().SequenceEqual(again), $"the snapshot at {p} changed");
    }

    private void IteratorView(KvDb db)
    {
        long a0 = Volatile.Read(ref _acked);
        using KvIterator it = db.NewIterator();
        long a1 = Volatile.Read(ref _acked);
        CheckView(Scan(it, forward: false), a0, a1 + 1, "iterator");
    }

    /// <summary>Round of every key (-1: absent) by a full scan of a new iterator.</summary>
    private static long[] ReadView(KvDb db, ReadOptions? ro, bool forward)
    {
        using KvIterator it = db.NewIterator(ro);
        return Scan(it, forward);
    }

    private static long[] Scan(KvIterator it, bool forward)
    {
        var view = new long[N];
        Array.Fill(view, -1);
        int previous = forward ? -1 : N;
        if (forward)
        {
            it.SeekToFirst();
        }
        else
        {
            it.SeekToLast();
        }
        for (; it.Valid; MoveOn(it, forward))
        {
            (long round, int key) = Parse(it.Value);
            Assert.Equal(Key(key), it.Key.ToArray());
            Assert.True(forward ? key > previous : key < previous, "keys out of order");
            previous = key;
            view[key] = round;
        }
        return view;
    }

    private static void MoveOn(KvIterator it, bool forward)
    {
        if (forward)
        {
            it.Next();
        }
        else
        {
            it.Prev();
        }
    }

    /// <summary>Asserts that <paramref name="view"/> is the state after P writes for one P in [lo, hi]; returns P.</summary>
    private static long CheckView(long[] view, long lo, long hi, string what)
    {
        long p;
        if (view[0] < 0)
        {
            p = 0;
        }
        else
        {
            int j = 1;
            while (j < N && view[j] == view[0])
            {
                j++;
            }
            p = view[0] * N + j;
        }
        for (int k = 0; k < N; k++)
        {
            long expected = k < p ? (p - 1 - k) / N : -1;
            Assert.True(view[k] == expected, $"{what}: key {k} has round {view[k]}, but the view after {p} writes has {expected}");
        }
        Assert.True(p >= lo && p <= hi, $"{what}: the view after {p} writes is outside [{lo}, {hi}]");
        return p;
    }

    private static byte[] Key(int k) => DbTestUtil.B("c" + k.ToString("D5", CultureInfo.InvariantCulture));

    private static byte[] Value(long round, int k) =>
        DbTestUtil.B(round.ToString(CultureInfo.InvariantCulture) + ":" + k.ToString(CultureInfo.InvariantCulture) + ":" + new string('p', 20 + k % 30));

    private static (long Round, int Key) Parse(ReadOnlySpan<byte> v)
    {
        string[] parts = DbTestUtil.S(v).Split(':');
        return (long.Parse(parts[0], CultureInfo.InvariantCulture), int.Parse(parts[1], CultureInfo.InvariantCulture));
    }
}
