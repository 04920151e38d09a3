using System.Buffers.Binary;

namespace KvEngine.Tests.Db;

/// <summary>
/// Concurrent writers through the group-commit queue: synchronous Put and Write (whose per-thread
/// request is reused from one write to the next), asynchronous writes and memtable switches,
/// mixed. Every acknowledged write must be readable exactly once, in its own sequence number.
/// </summary>
public sealed class GroupCommitTests : IDisposable
{
    private const int Threads = 4;
    private const int WritesPerThread = 1_500;

    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-group-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Fact]
    public void ConcurrentSyncAndAsyncWritersLoseAndRepeatNothing()
    {
        string path = Path.Combine(_dir.FullName, "db");
        var options = new KvOptions { WriteBufferSize = 64 << 10, MaxWriteBufferNumber = 3 };
        using (KvDb db = KvDb.Open(path, options))
        {
            using var start = new Barrier(Threads);
            var workers = new Thread[Threads];
            for (int t = 0; t < Threads; t++)
            {
                int thread = t;
                workers[t] = new Thread(() => WriteMany(db, thread, start));
                workers[t].Start();
            }
            foreach (Thread w in workers)
            {
                w.Join();
            }

            // Each write took exactly one sequence number (a batch of two takes two).
            Assert.Equal((ulong)(Threads * WritesPerThread) + (ulong)(Threads * WritesPerThread / 3), db.LatestSequenceNumber);
            AssertAllPresent(db);
        }
        using (KvDb reopened = KvDb.Open(path, options))
        {
            AssertAllPresent(reopened);
        }
    }

    private static void WriteMany(KvDb db, int thread, Barrier start)
    {
        using var batch = new WriteBatch();
        start.SignalAndWait();
        for (int i = 0; i < WritesPerThread; i++)
        {
            byte[] key = Key(thread, i);
            switch (i % 3)
            {
                case 0:
                    db.Put(key, Value(thread, i));
                    break;
                case 1:
                    db.PutAsync(key, Value(thread, i)).AsTask().GetAwaiter().GetResult();
                    break;
                default:
                    batch.Clear();
                    batch.Put(key, Value(thread, i));
                    batch.Put(ExtraKey(thread, i), Value(thread, i));
                    db.Write(batch);
                    break;
            }
            if (thread == 0 && i % 500 == 499)
            {
                db.Flush();
            }
        }
    }

    private static void AssertAllPresent(KvDb db)
    {
        for (int t = 0; t < Threads; t++)
        {
            for (int i = 0; i < WritesPerThread; i++)
            {
                Assert.Equal(Value(t, i), db.Get(Key(t, i)));
                if (i % 3 == 2)
                {
                    Assert.Equal(Value(t, i), db.Get(ExtraKey(t, i)));
                }
            }
        }
    }

    private static byte[] Key(int thread, int i) => KeyBytes((byte)'k', thread, i);

    private static byte[] ExtraKey(int thread, int i) => KeyBytes((byte)'x', thread, i);

    private static byte[] KeyBytes(byte prefix, int thread, int i)
    {
        var key = new byte[9];
        key[0] = prefix;
        BinaryPrimitives.WriteInt32BigEndian(key.AsSpan(1), thread);
        BinaryPrimitives.WriteInt32BigEndian(key.AsSpan(5), i);
        return key;
    }

    private static byte[] Value(int thread, int i) => System.Text.Encoding.ASCII.GetBytes($"value-{thread}-{i}-{new string('v', i % 50)}");
}
