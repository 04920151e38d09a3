using static KvEngine.Tests.Db.DbTestUtil;

namespace KvEngine.Tests.Db;

/// <summary>
/// The pooled cursors behind <see cref="KvIterator"/> handles (<c>Db/IteratorCursor</c>,
/// <c>Db/IteratorCursorPool</c>) under several threads: iterators created, used and disposed at
/// once, each disposed twice (once through a copy) and then used through the stale handle, while
/// the cursors pass between threads through the pool. Each thread must only ever see its own
/// iterator's entries, and every stale handle must throw <see cref="ObjectDisposedException"/>.
/// </summary>
public class IteratorCursorTests
{
    private const int Threads = 4;
    private const int Rounds = 3_000;

    [Fact]
    public void CursorsPassingBetweenThreadsNeverServeAStaleHandle()
    {
        using KvDb db = KvDb.Open(DbPath, SmallOptions(NewFs()));
        for (int i = 0; i < 100; i++)
        {
            db.Put(B($"k{i:D3}"), B($"v{i}"));
        }
        var failures = new System.Collections.Concurrent.ConcurrentQueue<string>();
        using var start = new Barrier(Threads);
        var threads = new Thread[Threads];
        for (int t = 0; t < Threads; t++)
        {
            int id = t;
            threads[t] = new Thread(() =>
            {
                start.SignalAndWait();
                try
                {
                    Run(db, id, failures);
                }
#pragma warning disable CA1031 // reported through the queue: an exception on this thread would end the test host
                catch (Exception e)
#pragma warning restore CA1031
                {
                    failures.Enqueue($"thread {id}: {e.GetType().Name}: {e.Message}");
                }
            });
            threads[t].Start();
        }
        foreach (Thread th in threads)
        {
            th.Join();
        }
        Assert.Empty(failures);
    }

    private static void Run(KvDb db, int id, System.Collections.Concurrent.ConcurrentQueue<string> failures)
    {
        for (int r = 0; r < Rounds && failures.IsEmpty; r++)
        {
            int k = ((r * Threads) + id) % 100;
            KvIterator it = db.NewIterator();
            KvIterator copy = it;
            it.Seek(B($"k{k:D3}"));
            if (!it.Valid || S(it.Key) != $"k{k:D3}" || S(copy.Value) != $"v{k}")
            {
                failures.Enqueue($"thread {id} round {r}: expected k{k:D3}, got {(it.Valid ? S(it.Key) : "nothing")}");
            }
            it.Dispose();
            copy.Dispose(); // a second Dispose: must not end the lease another thread may hold now
            try
            {
                copy.Seek(B("k000"));
                failures.Enqueue($"thread {id} round {r}: a disposed handle could still seek");
            }
            catch (ObjectDisposedException)
            {
            }
        }
    }
}
